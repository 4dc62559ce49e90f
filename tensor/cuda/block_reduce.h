// Combining per-thread partial results across the threads that share one
// row, for the reduction, softmax and cross-entropy kernels, and the launch
// shape of a kernel with a block row per tensor row. CUDA-only.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ts::cuda {

// The most threads a row kernel gives one row (its __launch_bounds__ and the
// size of its scratch).
constexpr int kMaxRowThreads = 512;

// Blocks of `lanes` threads along x per row, lanes a power of two for about
// 8 elements each up to kMaxRowThreads, and 256-thread blocks holding
// several rows (along y) when rows are short.
inline dim3 row_block(int64_t row_length) {
  int lanes = 1;
  while (lanes < kMaxRowThreads && lanes * 8 < row_length) lanes *= 2;
  return dim3(lanes, std::max(1, 256 / lanes));
}

struct PlusCombine {
  template <typename A>
  __device__ A operator()(A a, A b) const {
    return a + b;
  }
};

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
