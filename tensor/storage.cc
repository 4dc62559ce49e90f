#include "tensor/storage.h"

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "tensor/cpu_allocator.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"

namespace ts {

// The allocators are the runtime layer and report a Status (out of memory,
// no such device); the op surface turns it into an Error here.
std::shared_ptr<Storage> Storage::allocate(int64_t nbytes, Device device) {
  TS_CHECK(nbytes >= 0, "allocate: negative size ", nbytes);
  if (device.is_cpu()) {
    void* data = value_or_throw(cpu_allocator::allocate(nbytes));
    return std::make_shared<Storage>(data, nbytes, device, [nbytes](void* p) { cpu_allocator::deallocate(p, nbytes); });
  }
  throw_if_error(cuda::check_device(device.index));
  cuda::CachingAllocator& allocator = cuda::caching_allocator(device.index);
  void* data = value_or_throw(allocator.allocate(nbytes, cuda::current_stream(device.index)));
  return std::make_shared<Storage>(data, nbytes, device, [&allocator](void* p) { allocator.deallocate(p); });
}

Storage::Storage(void* data, int64_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_);
}

}  // namespace ts
