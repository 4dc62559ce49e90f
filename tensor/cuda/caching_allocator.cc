#include "tensor/cuda/caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"

namespace ts::cuda {

struct CachingAllocator::Block {
  cudaStream_t stream;
  size_t size;
  char* ptr;
  bool small;              // which pool, fixed at segment creation
  bool allocated = false;  // handed out, or freed but awaiting other streams
  Block* prev = nullptr;   // neighbours within the same segment
  Block* next = nullptr;
  std::set<cudaStream_t> used_by;  // other streams (record_stream)
};

bool CachingAllocator::BlockOrder::operator()(const Block* a, const Block* b) const {
  return std::make_tuple(reinterpret_cast<uintptr_t>(a->stream), a->size, reinterpret_cast<uintptr_t>(a->ptr)) <
         std::make_tuple(reinterpret_cast<uintptr_t>(b->stream), b->size, reinterpret_cast<uintptr_t>(b->ptr));
}

std::string AllocatorStats::to_string() const {
  return absl::StrCat("allocated ", allocated_bytes, " B (peak ", peak_allocated_bytes, " B), reserved ",
                      reserved_bytes, " B (peak ", peak_reserved_bytes, " B), ", num_device_mallocs, " cudaMalloc / ",
                      num_device_frees, " cudaFree calls");
}

CachingAllocator::CachingAllocator(std::unique_ptr<DeviceMemory> device) : device_(std::move(device)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  for (PendingFree& p : pending_) {
    for (cudaEvent_t e : p.events) device_->destroy_event(e);
    p.block->used_by.clear();
    return_to_pool(p.block);
  }
  pending_.clear();
  // Blocks still allocated belong to tensors that outlive the allocator (only
  // at process exit); their segments are left to the driver.
  release_cached_segments();
}

size_t CachingAllocator::round_size(size_t bytes) { return std::max(kRound, (bytes + kRound - 1) / kRound * kRound); }

size_t CachingAllocator::segment_size(size_t rounded) {
  if (rounded <= kSmallRequest) return kSmallSegment;
  if (rounded < kLargeRequest) return kLargeSegment;
  constexpr size_t kGranule = 2 << 20;
  return (rounded + kGranule - 1) / kGranule * kGranule;
}

CachingAllocator::Block* CachingAllocator::find_free_block(Pool& pool, size_t size, cudaStream_t stream) {
  Block key{stream, size, nullptr, false};
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

absl::StatusOr<CachingAllocator::Block*> CachingAllocator::new_segment(size_t size, cudaStream_t stream, bool small) {
  const size_t bytes = segment_size(size);
  absl::StatusOr<void*> ptr = device_->malloc(bytes);
  if (!ptr.ok() && ptr.status().code() == absl::StatusCode::kResourceExhausted) {
    // Cached but unused segments may be what stands in the way.
    device_->synchronize_device();
    process_pending_frees();
    release_cached_segments();
    ptr = device_->malloc(bytes);
  }
  if (!ptr.ok()) {
    return absl::Status(ptr.status().code(),
                        absl::StrCat("CUDA caching allocator: cannot allocate ", size, " bytes (segment of ", bytes,
                                     " bytes); ", stats_.to_string(), ": ", ptr.status().message()));
  }
  stats_.num_device_mallocs++;
  stats_.reserved_bytes += bytes;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  return new Block{stream, bytes, static_cast<char*>(*ptr), small};
}

CachingAllocator::Block* CachingAllocator::split(Block* block, size_t size) {
  // Keep the remainder only if it can serve a request of its pool.
  const size_t remainder = block->size - size;
  const size_t min_remainder = block->small ? kRound : kSmallRequest + 1;
  if (remainder < min_remainder) return block;
  Block* rest = new Block{block->stream, remainder, block->ptr + size, block->small};
  rest->prev = block;
  rest->next = block->next;
  if (block->next != nullptr) block->next->prev = rest;
  block->next = rest;
  block->size = size;
  (block->small ? small_pool_ : large_pool_).insert(rest);
  return block;
}

absl::StatusOr<void*> CachingAllocator::allocate(size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  process_pending_frees();
  const size_t size = round_size(bytes);
  Pool& pool = pool_for(size);
  Block* block = find_free_block(pool, size, stream);
  if (block == nullptr) {
    absl::StatusOr<Block*> segment = new_segment(size, stream, &pool == &small_pool_);
    if (!segment.ok()) return segment.status();
    block = *segment;
  }
  block = split(block, size);
  block->allocated = true;
  allocated_[block->ptr] = block;
  stats_.num_allocations++;
  count_allocated(static_cast<int64_t>(block->size));
  return static_cast<void*>(block->ptr);
}

void CachingAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    std::fprintf(stderr, "fatal: CUDA caching allocator: free of unknown pointer %p\n", ptr);
    std::abort();
  }
  Block* block = it->second;
  allocated_.erase(it);
  count_allocated(-static_cast<int64_t>(block->size));
  if (block->used_by.empty()) {
    return_to_pool(block);
    return;
  }
  // Until other streams are done with it the block stays marked allocated,
  // so no neighbour merges with it.
  PendingFree pending{block, {}};
  for (cudaStream_t s : block->used_by) {
    absl::StatusOr<cudaEvent_t> event = device_->record_event(s);
    if (!event.ok()) {
      // Without an event the only safe point is a device-wide synchronization.
      device_->synchronize_device();
      continue;
    }
    pending.events.push_back(*event);
  }
  block->used_by.clear();
  if (pending.events.empty()) {
    return_to_pool(block);
  } else {
    pending_.push_back(std::move(pending));
  }
}

void CachingAllocator::record_stream(void* ptr, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end() || it->second->stream == stream) return;
  it->second->used_by.insert(stream);
}

void CachingAllocator::return_to_pool(Block* block) {
  block->allocated = false;
  Pool& pool = block->small ? small_pool_ : large_pool_;
  // Merge with free neighbours of the same segment; they leave the pool and
  // the merged block re-enters it under its new size.
  if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
    pool.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && !next->allocated) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  pool.insert(block);
}

void CachingAllocator::process_pending_frees() {
  auto still_pending = pending_.begin();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    bool done = true;
    for (cudaEvent_t e : it->events) {
      absl::StatusOr<bool> ready = device_->event_done(e);
      // A failed query is treated as not ready; synchronize_device() on the
      // out-of-memory path settles it.
      if (!ready.ok() || !*ready) {
        done = false;
        break;
      }
    }
    if (done) {
      for (cudaEvent_t e : it->events) device_->destroy_event(e);
      return_to_pool(it->block);
    } else {
      if (still_pending != it) *still_pending = std::move(*it);  // self-move would empty it
      ++still_pending;
    }
  }
  pending_.erase(still_pending, pending_.end());
}

void CachingAllocator::release_segment(Block* block) {
  device_->free(block->ptr);
  stats_.num_device_frees++;
  stats_.reserved_bytes -= static_cast<int64_t>(block->size);
  delete block;
}

void CachingAllocator::release_cached_segments() {
  // A free block spanning a whole segment has no neighbours.
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* block = *it;
      if (block->prev == nullptr && block->next == nullptr) {
        it = pool->erase(it);
        release_segment(block);
      } else {
        ++it;
      }
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  process_pending_frees();
  release_cached_segments();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
}

void CachingAllocator::count_allocated(int64_t delta) {
  stats_.allocated_bytes += delta;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
}

namespace {

class RuntimeDeviceMemory final : public DeviceMemory {
 public:
  explicit RuntimeDeviceMemory(int device) : device_(device) {}

  absl::StatusOr<void*> malloc(size_t bytes) override {
    DeviceGuard guard(device_);
    void* ptr = nullptr;
    const cudaError_t e = cudaMalloc(&ptr, bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();  // out of memory is not sticky; clear it for later calls
      return call_error(status_code_of(e), describe_error(e), "cudaMalloc", __FILE__, __LINE__);
    }
    return ptr;
  }
  void free(void* ptr) override {
    DeviceGuard guard(device_);
    CHECK_CUDA(cudaFree(ptr));
  }
  absl::StatusOr<cudaEvent_t> record_event(cudaStream_t stream) override {
    DeviceGuard guard(device_);
    cudaEvent_t event = nullptr;
    RETURN_IF_CUDA_ERROR(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    const absl::Status recorded = [&]() -> absl::Status {
      RETURN_IF_CUDA_ERROR(cudaEventRecord(event, stream));
      return absl::OkStatus();
    }();
    if (!recorded.ok()) {
      CHECK_CUDA(cudaEventDestroy(event));
      return recorded;
    }
    return event;
  }
  absl::StatusOr<bool> event_done(cudaEvent_t event) override { return event_completed(event); }
  void destroy_event(cudaEvent_t event) override { CHECK_CUDA(cudaEventDestroy(event)); }
  void synchronize_device() override {
    DeviceGuard guard(device_);
    CHECK_CUDA(cudaDeviceSynchronize());
  }

 private:
  int device_;
};

}  // namespace

CachingAllocator& caching_allocator(int device) {
  // One per device, created on first use and never destroyed: tensors held in
  // static storage may be freed after main returns.
  static std::mutex mu;
  static std::map<int, CachingAllocator*>* allocators = new std::map<int, CachingAllocator*>;
  std::lock_guard<std::mutex> lock(mu);
  CachingAllocator*& a = (*allocators)[device];
  if (a == nullptr) a = new CachingAllocator(std::make_unique<RuntimeDeviceMemory>(device));
  return *a;
}

}  // namespace ts::cuda
