// Combining per-thread partial results across the threads that share one
// row, for the reduction and softmax kernels. CUDA-only (device code).
#pragma once

#include <cstdint>

namespace ts::cuda {

// __shfl_xor_sync for any trivially copyable value, moved as 32-bit words:
// accumulators can be structs (ArgExtremum's value and index, Welford's
// moments).
template <typename A>
__device__ __forceinline__ A shfl_xor(A value, int mask) {
  static_assert(sizeof(A) % sizeof(uint32_t) == 0);
  uint32_t words[sizeof(A) / sizeof(uint32_t)];
  memcpy(words, &value, sizeof(A));
#pragma unroll
  for (uint32_t& w : words) w = __shfl_xor_sync(0xffffffffu, w, mask);
  memcpy(&value, words, sizeof(A));
  return value;
}

// Combines `value` across the `lanes` threads along x that share a row
// (threads x and y of the block work on row y; lanes is a power of two and
// equals blockDim.x) and returns the total to every one of them: butterfly
// shuffles within a warp, then, for rows wider than a warp, the warps' totals
// through `scratch` (blockDim.y * lanes / 32 values). Every thread of the
// block must call it: it may synchronize the block.
template <typename A, typename Combine>
__device__ A combine_across_lanes(A value, int lanes, A* scratch, const Combine& combine) {
  for (int mask = (lanes < 32 ? lanes : 32) / 2; mask > 0; mask /= 2) {
    value = combine(value, shfl_xor(value, mask));
  }
  if (lanes > 32) {
    const int warps = lanes / 32;
    A* row = scratch + threadIdx.y * warps;
    if (threadIdx.x % 32 == 0) row[threadIdx.x / 32] = value;
    __syncthreads();
    value = row[0];
    for (int w = 1; w < warps; ++w) value = combine(value, row[w]);
    __syncthreads();  // every thread has read scratch before anyone reuses it
  }
  return value;
}

}  // namespace ts::cuda
