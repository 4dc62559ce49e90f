// Walks a StridedLayout in parallel chunks, handing each run of elements
// along the innermost dim to `run(offsets, count, inner_strides)`. Runs with
// unit inner strides are where kernels put their vectorizable loops.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tensor/cpu/parallel.h"
#include "tensor/strided_layout.h"

namespace ts::cpu {

// Elements per parallel chunk: large enough to amortize waking a thread.
inline constexpr int64_t kElementwiseGrain = 32768;

template <int N, typename Run>
void for_each_run(const StridedLayout<N>& layout, Run&& run) {
  if (layout.numel == 0) return;
  if (layout.ndim == 0) {
    int64_t offsets[N] = {};
    int64_t strides[N] = {};
    run(offsets, int64_t{1}, strides);
    return;
  }
  const int inner = layout.ndim - 1;
  const int64_t row = layout.sizes[inner];
  int64_t inner_strides[N];
  for (int k = 0; k < N; ++k) inner_strides[k] = layout.strides[k][inner];
  parallel_for(layout.numel, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    int64_t index[kMaxLayoutDims];
    int64_t offsets[N] = {};
    int64_t rest = begin;
    for (int d = layout.ndim - 1; d >= 0; --d) {
      index[d] = rest % layout.sizes[d];
      rest /= layout.sizes[d];
      for (int k = 0; k < N; ++k) offsets[k] += index[d] * layout.strides[k][d];
    }
    for (int64_t pos = begin; pos < end;) {
      const int64_t count = std::min(row - index[inner], end - pos);
      run(offsets, count, inner_strides);
      pos += count;
      index[inner] += count;
      for (int k = 0; k < N; ++k) offsets[k] += count * inner_strides[k];
      // Carry into outer dims when a row is finished.
      for (int d = inner; d > 0 && index[d] == layout.sizes[d]; --d) {
        index[d] = 0;
        index[d - 1] += 1;
        for (int k = 0; k < N; ++k) {
          offsets[k] += layout.strides[k][d - 1] - layout.sizes[d] * layout.strides[k][d];
        }
      }
    }
  });
}

}  // namespace ts::cpu
