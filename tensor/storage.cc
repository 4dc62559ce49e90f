#include "tensor/storage.h"

#include "absl/strings/str_cat.h"
#include "tensor/cpu_allocator.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"

namespace ts {

absl::StatusOr<std::shared_ptr<Storage>> Storage::allocate(int64_t nbytes, Device device) {
  if (nbytes < 0) return absl::InvalidArgumentError(absl::StrCat("negative allocation size ", nbytes));
  if (device.is_cpu()) {
    absl::StatusOr<void*> data = cpu_allocator::allocate(nbytes);
    if (!data.ok()) return data.status();
    return std::make_shared<Storage>(*data, nbytes, device,
                                     [nbytes](void* p) { cpu_allocator::deallocate(p, nbytes); });
  }
  if (auto s = cuda::check_device(device.index); !s.ok()) return s;
  cuda::CachingAllocator& allocator = cuda::caching_allocator(device.index);
  absl::StatusOr<void*> data = allocator.allocate(nbytes, cuda::current_stream(device.index));
  if (!data.ok()) return data.status();
  return std::make_shared<Storage>(*data, nbytes, device,
                                   [&allocator](void* p) { allocator.deallocate(p); });
}

Storage::Storage(void* data, int64_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_);
}

}  // namespace ts
