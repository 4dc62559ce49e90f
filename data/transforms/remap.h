// The one CPU kernel behind every geometric transform (crop, pad, flip,
// rotation by 90 degrees): a gather along each axis through an index map,
// dtype-agnostic (elements move as bytes), with -1 meaning "fill with zero".
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tensor/tensor.h"

namespace ts::data::transforms {

// out[i_0, ..., i_n] = x[maps[0][i_0], ..., maps[n][i_n]] (a zero element
// where any map gives -1). One map per dim of x; an empty map keeps the dim
// whole. x may be any strided view (a permuted view expresses transposes);
// out is a new contiguous tensor. Map entries must be -1 or in range.
absl::StatusOr<Tensor> remap(const Tensor& x, absl::Span<const std::vector<int64_t>> maps);

// The map of a window [start, start + length) over a dim of `size`; indices
// outside [0, size) (padding) map to -1; reversed: read back to front.
std::vector<int64_t> window_map(int64_t size, int64_t start, int64_t length, bool reversed = false);

}  // namespace ts::data::transforms
