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

// NumPy broadcasting of two shapes; throws an Error naming `op` and both
// shapes.
Shape broadcast_shapes(absl::string_view op, Dims a, Dims b);

// Maps a possibly negative `dim` into [0, ndim); throws an Error naming `op`.
int64_t normalize_dim(absl::string_view op, int64_t dim, int64_t ndim);

// Normalizes a list of dims (empty means all dims) into a sorted set, rejecting
// duplicates. Returned as a bit mask over [0, ndim).
uint64_t normalize_dim_mask(absl::string_view op, Dims dims, int64_t ndim);

}  // namespace ts
