// How an elementwise kernel walks N same-shaped operands (the output first):
// size-1 dims are dropped, the rest taken in the output's memory order (by
// its strides, so a channels-last output is walked as [N, H, W, C]), and
// neighbouring dims merged wherever every operand is contiguous across them,
// so the common cases become one flat loop and the rest a few nested
// strides. Shared by the CPU and CUDA backends.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "base/error.h"
#include "tensor/host_device.h"
#include "tensor/int_divider.h"
#include "tensor/tensor.h"

namespace ts {

inline constexpr int kMaxLayoutDims = 10;

template <int N>
struct StridedLayout {
  int ndim = 0;  // after merging; 0 for a single element
  int64_t numel = 0;
  int64_t sizes[kMaxLayoutDims] = {};       // outermost first
  IntDivider by_size[kMaxLayoutDims];       // divides by sizes[d], without a division
  int64_t strides[N][kMaxLayoutDims] = {};  // in elements; 0 for broadcast

  // Whether operand k is walked with unit stride in one flat loop.
  TS_HOST_DEVICE bool flat(int k) const { return ndim <= 1 && (ndim == 0 || strides[k][0] == 1); }
  bool all_flat() const {
    for (int k = 0; k < N; ++k) {
      if (!flat(k)) return false;
    }
    return true;
  }

  // The element offset of every operand for the row-major linear index `i`,
  // with one (multiply-shift) division per dim whatever the number of
  // operands.
  TS_HOST_DEVICE void offsets(int64_t i, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t quotient = by_size[d].div(i);
      const int64_t coord = i - quotient * sizes[d];
      for (int k = 0; k < N; ++k) out[k] += coord * strides[k][d];
      i = quotient;
    }
  }
};

// Builds the layout; operands[k] == nullptr marks a scalar operand (all
// strides 0). Every tensor must have operands[0]'s shape.
template <int N>
StridedLayout<N> make_layout(const std::array<const Tensor*, N>& operands) {
  const Tensor& out = *operands[0];
  TS_CHECK(out.dim() <= 64, "elementwise op on ", out.describe(), ": more than 64 dims");
  StridedLayout<N> layout;
  layout.numel = out.numel();
  // The non-trivial dims, outermost first in the output's memory order
  // (a stable sort, so a row-major output keeps the dims' own order).
  int64_t order[64];
  int64_t kept = 0;
  for (int64_t d = 0; d < out.dim(); ++d) {
    if (out.shape()[d] != 1) order[kept++] = d;
  }
  std::stable_sort(order, order + kept, [&](int64_t a, int64_t b) { return out.strides()[a] > out.strides()[b]; });
  // Gather them innermost first, merging into the previous (inner) one when
  // every operand steps over both as one.
  int64_t sizes[64];
  int64_t strides[N][64];
  int n = 0;
  for (int64_t i = kept - 1; i >= 0; --i) {
    const int64_t d = order[i];
    const int64_t size = out.shape()[d];
    bool mergeable = n > 0;
    for (int k = 0; k < N && mergeable; ++k) {
      const int64_t stride = operands[k] ? operands[k]->strides()[d] : 0;
      mergeable = stride == strides[k][n - 1] * sizes[n - 1];
    }
    if (mergeable) {
      sizes[n - 1] *= size;
      continue;
    }
    sizes[n] = size;
    for (int k = 0; k < N; ++k) strides[k][n] = operands[k] ? operands[k]->strides()[d] : 0;
    ++n;
  }
  TS_CHECK(n <= kMaxLayoutDims, "elementwise op on ", out.describe(), ": the operands' strides leave ", n,
           " dims that cannot be merged (at most ", kMaxLayoutDims, " are supported); make them contiguous");
  layout.ndim = n;
  for (int d = 0; d < n; ++d) {
    layout.sizes[d] = sizes[n - 1 - d];
    // An empty dim leaves nothing to walk; its divider is never used.
    layout.by_size[d] = IntDivider(std::max<int64_t>(layout.sizes[d], 1));
    for (int k = 0; k < N; ++k) layout.strides[k][d] = strides[k][n - 1 - d];
  }
  return layout;
}

}  // namespace ts
