#include "data/loader/host_buffer_pool.h"

#include <cuda_runtime_api.h>

#include "tensor/cpu_allocator.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"

namespace ts::data {

std::shared_ptr<HostBufferPool> HostBufferPool::create(bool pin, int device, int64_t max_cached_bytes) {
  return std::shared_ptr<HostBufferPool>(new HostBufferPool(pin && cuda::is_available(), device, max_cached_bytes));
}

HostBufferPool::~HostBufferPool() {
  // Every storage holds the pool, so none is alive here: only free buffers.
  for (auto& [nbytes, buffers] : free_) {
    for (void* p : buffers) release_to_system(p, nbytes);
  }
}

absl::StatusOr<void*> HostBufferPool::fresh(size_t nbytes) {
  if (!pinned_) return cpu_allocator::allocate(nbytes);
  void* p = nullptr;
  cuda::DeviceGuard guard(device_);
  RETURN_IF_CUDA_ERROR(cudaHostAlloc(&p, nbytes, cudaHostAllocDefault));
  return p;
}

void HostBufferPool::release_to_system(void* ptr, size_t nbytes) {
  if (pinned_) {
    cuda::DeviceGuard guard(device_);
    CHECK_CUDA(cudaFreeHost(ptr));
  } else {
    cpu_allocator::deallocate(ptr, nbytes);
  }
}

absl::StatusOr<std::shared_ptr<Storage>> HostBufferPool::allocate(int64_t nbytes) {
  if (nbytes < 0) return absl::InvalidArgumentError("HostBufferPool: negative allocation size");
  const size_t size = static_cast<size_t>(nbytes);
  void* ptr = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      stats_.cached_bytes -= nbytes;
    }
  }
  if (ptr == nullptr && size > 0) {
    absl::StatusOr<void*> p = fresh(size);
    if (!p.ok()) return p.status();
    ptr = *p;
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.num_fresh_allocations;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.in_use_bytes += nbytes;
  }
  std::shared_ptr<HostBufferPool> self = shared_from_this();
  return std::make_shared<Storage>(ptr, nbytes, Device::cpu(), [self, size](void* p) { self->give_back(p, size); });
}

void HostBufferPool::give_back(void* ptr, size_t nbytes) {
  const int64_t n = static_cast<int64_t>(nbytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.in_use_bytes -= n;
    if (ptr == nullptr) return;
    if (stats_.cached_bytes + n <= max_cached_bytes_) {
      free_[nbytes].push_back(ptr);
      stats_.cached_bytes += n;
      return;
    }
  }
  release_to_system(ptr, nbytes);
}

HostBufferPoolStats HostBufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace ts::data
