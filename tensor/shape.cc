#include "tensor/shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace ts {

std::string shape_str(Dims shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

int64_t shape_numel(Dims shape) {
  // No size is negative (every maker of shapes checks); a zero anywhere makes
  // any other sizes fine. Otherwise a product past int64 would wrap, and a
  // view of the wrapped count would reach outside its storage.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t s : shape) {
    TS_CHECK(!__builtin_mul_overflow(n, s, &n), "shape ", shape_str(shape),
             " has more elements than an int64 can count");
  }
  return n;
}

Shape contiguous_strides(Dims shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

const char* memory_format_name(MemoryFormat format) {
  return format == MemoryFormat::kChannelsLast ? "channels_last" : "contiguous";
}

Shape dense_strides(Dims shape, MemoryFormat format) {
  if (format == MemoryFormat::kContiguous) return contiguous_strides(shape);
  TS_CHECK(shape.size() == 4 || shape.size() == 5, "channels_last: needs a 4-D [N, C, H, W] or 5-D [N, C, D, H, W] ",
           "shape, got ", shape_str(shape));
  // Channels innermost, then the spatial dims from the last, then the batch.
  Shape strides(shape.size());
  int64_t stride = 1;
  auto place = [&](size_t d) {
    strides[d] = stride;
    stride *= std::max<int64_t>(shape[d], 1);
  };
  place(1);
  for (size_t d = shape.size() - 1; d >= 2; --d) place(d);
  place(0);
  return strides;
}

Shape broadcast_shapes(absl::string_view op, Dims a, Dims b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    TS_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", shape_str(a), " and ", shape_str(b),
             " are not broadcastable");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_dim(absl::string_view op, int64_t dim, int64_t ndim) {
  // A 0-d tensor accepts dim 0 and -1, as if it had one dim.
  const int64_t range = std::max<int64_t>(ndim, 1);
  TS_CHECK_INDEX(dim >= -range && dim < range, op, ": dim ", dim, " is out of range for a tensor with ", ndim, " dims");
  return dim < 0 ? dim + range : dim;
}

uint64_t normalize_dim_mask(absl::string_view op, Dims dims, int64_t ndim) {
  TS_CHECK(ndim <= 64, op, ": more than 64 dims");
  if (dims.empty()) return ndim == 64 ? ~uint64_t{0} : (uint64_t{1} << ndim) - 1;
  uint64_t mask = 0;
  for (int64_t d : dims) {
    const int64_t nd = normalize_dim(op, d, ndim);
    TS_CHECK(!(mask & (uint64_t{1} << nd)), op, ": dim ", d, " appears more than once in ", shape_str(dims));
    mask |= uint64_t{1} << nd;
  }
  if (ndim == 0) mask = 0;
  return mask;
}

}  // namespace ts
