// The CUDA caching allocator: device memory is obtained from cudaMalloc in
// segments, split into blocks, and freed blocks are kept for reuse by later
// allocations on the same stream, so steady-state training never calls
// cudaMalloc or cudaFree (each of which synchronizes the device).
//
// Policy, after PyTorch's allocator: sizes round up to 512 bytes; requests of
// at most 1 MiB share 2 MiB segments (the small pool), larger ones come from
// the large pool (20 MiB segments for requests under 10 MiB, else the request
// rounded to 2 MiB). A free block is best-fit within its stream's pool and
// split when the remainder is worth keeping; neighbours in a segment merge
// when both are free. Memory used by another stream (record_stream) returns to
// the pool only after that stream's work, marked by an event, has completed.
// When cudaMalloc fails, cached segments are released and it is tried again.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ts::cuda {

struct AllocatorStats {
  int64_t allocated_bytes = 0;  // in blocks handed out now (rounded sizes)
  int64_t reserved_bytes = 0;   // in segments held from the device
  int64_t peak_allocated_bytes = 0;
  int64_t peak_reserved_bytes = 0;
  int64_t num_allocations = 0;     // allocate() calls that succeeded
  int64_t num_device_mallocs = 0;  // segments obtained (cudaMalloc calls)
  int64_t num_device_frees = 0;    // segments released (cudaFree calls)
  std::string to_string() const;
};

// What the allocator needs from a device: the CUDA runtime in production, a
// fake in the tests (which run without a GPU).
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // ResourceExhausted when the device is out of memory.
  virtual absl::StatusOr<void*> malloc(size_t bytes) = 0;
  virtual void free(void* ptr) = 0;
  // An event recorded on `stream` now, queried until its work is done.
  virtual absl::StatusOr<cudaEvent_t> record_event(cudaStream_t stream) = 0;
  virtual absl::StatusOr<bool> event_done(cudaEvent_t event) = 0;
  virtual void destroy_event(cudaEvent_t event) = 0;
  virtual void synchronize_device() = 0;
};

class CachingAllocator {
 public:
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallRequest = 1 << 20;   // 1 MiB
  static constexpr size_t kSmallSegment = 2 << 20;   // 2 MiB
  static constexpr size_t kLargeSegment = 20 << 20;  // 20 MiB
  static constexpr size_t kLargeRequest = 10 << 20;  // requests from here get their own segment

  explicit CachingAllocator(std::unique_ptr<DeviceMemory> device);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // `stream` is where the memory will be used first; reuse is safe on it
  // without synchronization. A zero-byte request returns nullptr.
  absl::StatusOr<void*> allocate(size_t bytes, cudaStream_t stream);
  void deallocate(void* ptr);
  // Marks `ptr` as used by `stream` too: on free it is held back until the
  // work queued on `stream` up to that moment has finished.
  void record_stream(void* ptr, cudaStream_t stream);
  // Returns every unused cached segment to the device.
  void empty_cache();
  AllocatorStats stats() const;
  void reset_peak_stats();

 private:
  struct Block;
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BlockOrder>;
  struct PendingFree {
    Block* block;
    std::vector<cudaEvent_t> events;
  };

  static size_t round_size(size_t bytes);
  static size_t segment_size(size_t rounded);
  Pool& pool_for(size_t rounded) { return rounded <= kSmallRequest ? small_pool_ : large_pool_; }
  Block* find_free_block(Pool& pool, size_t size, cudaStream_t stream);
  absl::StatusOr<Block*> new_segment(size_t size, cudaStream_t stream, bool small);
  Block* split(Block* block, size_t size);
  void return_to_pool(Block* block);
  void process_pending_frees();
  void release_cached_segments();
  void release_segment(Block* block);
  void count_allocated(int64_t delta);

  std::unique_ptr<DeviceMemory> device_;
  mutable std::mutex mu_;
  Pool small_pool_;
  Pool large_pool_;
  std::map<void*, Block*> allocated_;
  std::vector<PendingFree> pending_;
  AllocatorStats stats_;
};

// The process-wide allocator of each device, backed by the CUDA runtime.
CachingAllocator& caching_allocator(int device);

}  // namespace ts::cuda
