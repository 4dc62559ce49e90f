#include "tensor/storage.h"

#include <atomic>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"

namespace ts {
namespace {

// Cache-line alignment lets kernels use aligned vector loads on any tensor
// that starts at its storage's beginning.
constexpr size_t kCpuAlignment = 64;

std::atomic<int64_t> cpu_allocated{0};
std::atomic<int64_t> cpu_peak{0};

void count_cpu(int64_t delta) {
  const int64_t now = cpu_allocated.fetch_add(delta) + delta;
  int64_t peak = cpu_peak.load();
  while (now > peak && !cpu_peak.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<Storage>> Storage::allocate(int64_t nbytes, Device device) {
  if (nbytes < 0) return absl::InvalidArgumentError(absl::StrCat("negative allocation size ", nbytes));
  if (device.is_cpu()) {
    const size_t padded = (static_cast<size_t>(nbytes) + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    void* data = padded == 0 ? nullptr : std::aligned_alloc(kCpuAlignment, padded);
    if (padded != 0 && data == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("out of host memory allocating ", nbytes, " bytes"));
    }
    count_cpu(nbytes);
    return std::make_shared<Storage>(data, nbytes, device, [nbytes](void* p) {
      std::free(p);
      count_cpu(-nbytes);
    });
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

CpuMemoryStats cpu_memory_stats() { return {cpu_allocated.load(), cpu_peak.load()}; }

void reset_cpu_peak_memory() { cpu_peak.store(cpu_allocated.load()); }

}  // namespace ts
