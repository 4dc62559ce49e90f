// Shapes and strides (in elements), and the shape arithmetic ops share:
// element counts, contiguous strides, broadcasting, dim normalization.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace ts {

using Shape = absl::InlinedVector<int64_t, 6>;
using Dims = absl::Span<const int64_t>;

std::string shape_str(Dims shape);  // "[2, 3]"
int64_t shape_numel(Dims shape);
Shape contiguous_strides(Dims shape);

// The dense layouts of a 4-D [N, C, H, W] or 5-D [N, C, D, H, W] tensor:
// row-major in that order, or with the channels innermost ([N, H, W, C] /
// [N, D, H, W, C] in memory; PyTorch's channels_last and channels_last_3d),
// the layout that cuDNN's tensor-core convolutions and oneDNN's read without
// a transpose. Either way the shape, and so every op's meaning, is NC(D)HW.
enum class MemoryFormat { kContiguous, kChannelsLast };
const char* memory_format_name(MemoryFormat format);  // "contiguous", "channels_last"
// The strides of a dense tensor of `shape` in `format`; channels-last needs
// 4 or 5 dims (an Error otherwise).
Shape dense_strides(Dims shape, MemoryFormat format);

// NumPy broadcasting of two shapes; throws an Error naming `op` and both
// shapes.
Shape broadcast_shapes(absl::string_view op, Dims a, Dims b);

// Maps a possibly negative `dim` into [0, ndim); throws an Error naming `op`.
int64_t normalize_dim(absl::string_view op, int64_t dim, int64_t ndim);

// Normalizes a list of dims (empty means all dims) into a sorted set, rejecting
// duplicates. Returned as a bit mask over [0, ndim).
uint64_t normalize_dim_mask(absl::string_view op, Dims dims, int64_t ndim);

}  // namespace ts
