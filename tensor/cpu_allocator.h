// Host memory for CPU tensors: 64-byte aligned (so kernels may use aligned
// vector loads on any tensor that starts its storage), with large blocks
// cached after they are freed. A fresh large allocation is mmapped by the C
// library and faults on the first touch of every 4 KiB page, which costs more
// than a memory-bound op's own work on it; training allocates the same sizes
// every step, so cached blocks are reused warm.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

namespace ts {

struct CpuMemoryStats {
  int64_t allocated_bytes = 0;  // held by live tensors (requested sizes)
  int64_t peak_allocated_bytes = 0;
  int64_t cached_bytes = 0;  // freed large blocks kept for reuse
};

namespace cpu_allocator {

// Blocks of at least this size are cached, in bins of kGranule multiples.
inline constexpr size_t kCachedFrom = size_t{1} << 20;
inline constexpr size_t kGranule = size_t{2} << 20;

// `bytes` may be 0 (returns nullptr). Free with deallocate(ptr, bytes).
absl::StatusOr<void*> allocate(size_t bytes);
void deallocate(void* ptr, size_t bytes);
// Returns every cached block to the system.
void empty_cache();
// Largest total of cached blocks: a quarter of physical memory, or
// TS_CPU_CACHE_MB when set (0 disables caching).
size_t cache_limit();

}  // namespace cpu_allocator

CpuMemoryStats cpu_memory_stats();
void reset_cpu_peak_memory();

}  // namespace ts
