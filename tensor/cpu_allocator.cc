#include "tensor/cpu_allocator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace ts {
namespace {

constexpr size_t kAlignment = 64;

struct State {
  std::mutex mu;
  absl::flat_hash_map<size_t, std::vector<void*>> free_blocks;  // capacity -> blocks
  CpuMemoryStats stats;
};

State& state() {
  static State* s = new State;  // never destroyed: tensors may outlive main
  return *s;
}

size_t capacity_of(size_t bytes) {
  if (bytes >= cpu_allocator::kCachedFrom) {
    return (bytes + cpu_allocator::kGranule - 1) / cpu_allocator::kGranule * cpu_allocator::kGranule;
  }
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

namespace cpu_allocator {

size_t cache_limit() {
  static const size_t limit = [] {
    if (const char* env = std::getenv("TS_CPU_CACHE_MB")) return static_cast<size_t>(std::atoll(env)) << 20;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) * page / 4 : size_t{1} << 30;
  }();
  return limit;
}

absl::StatusOr<void*> allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t capacity = capacity_of(bytes);
  State& s = state();
  void* ptr = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (capacity >= kCachedFrom) {
      auto it = s.free_blocks.find(capacity);
      if (it != s.free_blocks.end() && !it->second.empty()) {
        ptr = it->second.back();
        it->second.pop_back();
        s.stats.cached_bytes -= capacity;
      }
    }
    s.stats.allocated_bytes += bytes;
    s.stats.peak_allocated_bytes = std::max(s.stats.peak_allocated_bytes, s.stats.allocated_bytes);
  }
  if (ptr == nullptr) ptr = std::aligned_alloc(kAlignment, capacity);
  if (ptr == nullptr) {
    empty_cache();  // what is cached may be what stands in the way
    ptr = std::aligned_alloc(kAlignment, capacity);
  }
  if (ptr == nullptr) {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stats.allocated_bytes -= bytes;
    return absl::ResourceExhaustedError(absl::StrCat("out of host memory allocating ", bytes, " bytes"));
  }
  return ptr;
}

void deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  const size_t capacity = capacity_of(bytes);
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stats.allocated_bytes -= bytes;
    if (capacity >= kCachedFrom && s.stats.cached_bytes + capacity <= static_cast<int64_t>(cache_limit())) {
      s.free_blocks[capacity].push_back(ptr);
      s.stats.cached_bytes += capacity;
      return;
    }
  }
  std::free(ptr);
}

void empty_cache() {
  State& s = state();
  std::vector<void*> blocks;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto& [capacity, list] : s.free_blocks) blocks.insert(blocks.end(), list.begin(), list.end());
    s.free_blocks.clear();
    s.stats.cached_bytes = 0;
  }
  for (void* p : blocks) std::free(p);
}

}  // namespace cpu_allocator

CpuMemoryStats cpu_memory_stats() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().stats;
}

void reset_cpu_peak_memory() {
  std::lock_guard<std::mutex> lock(state().mu);
  state().stats.peak_allocated_bytes = state().stats.allocated_bytes;
}

}  // namespace ts
