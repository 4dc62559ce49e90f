// Host memory for collated batches, reused across batches. Pinned (page-locked,
// cudaHostAlloc) when asked and a CUDA device is present, so host-to-device
// copies can run asynchronously at full bandwidth, through the context of the
// device the batches go to (the loader's workers are fresh threads, whose
// current device would be GPU 0: every rank of a machine would open a context
// there); otherwise 64-byte aligned
// memory from the tensor library's CPU allocator. The tensor library has no
// pinned allocator, and pinning is slow (it maps pages for the device), which
// is why freed buffers are kept here for the next batch of the same size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "tensor/storage.h"

namespace ts::data {

struct HostBufferPoolStats {
  int64_t in_use_bytes = 0;  // held by live storages
  int64_t cached_bytes = 0;  // free, kept for reuse
  int64_t num_fresh_allocations = 0;
};

class HostBufferPool : public std::enable_shared_from_this<HostBufferPool> {
 public:
  // Pinned memory only when `pin` and a CUDA device is usable, pinned for
  // `device` (a CUDA device index). Free buffers beyond `max_cached_bytes`
  // go back to the system.
  static std::shared_ptr<HostBufferPool> create(bool pin, int device = 0, int64_t max_cached_bytes = int64_t{1} << 30);
  ~HostBufferPool();
  HostBufferPool(const HostBufferPool&) = delete;
  HostBufferPool& operator=(const HostBufferPool&) = delete;

  bool pinned() const { return pinned_; }
  // A CPU storage of `nbytes` (uninitialized); its memory returns to this
  // pool when the storage dies (the storage keeps the pool alive).
  absl::StatusOr<std::shared_ptr<Storage>> allocate(int64_t nbytes);
  HostBufferPoolStats stats() const;

 private:
  HostBufferPool(bool pinned, int device, int64_t max_cached_bytes)
      : pinned_(pinned), device_(device), max_cached_bytes_(max_cached_bytes) {}
  absl::StatusOr<void*> fresh(size_t nbytes);
  void release_to_system(void* ptr, size_t nbytes);
  void give_back(void* ptr, size_t nbytes);

  const bool pinned_;
  const int device_;
  const int64_t max_cached_bytes_;
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  HostBufferPoolStats stats_;
};

}  // namespace ts::data
