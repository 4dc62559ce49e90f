#include "tensor/checks.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "tensor/dtype_dispatch.h"
#include "tensor/ops.h"

namespace ts {

void check_defined(absl::string_view op, const Tensor& t) { TS_CHECK(t.defined(), op, ": undefined tensor"); }

void check_same_device(absl::string_view op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) check_defined(op, *t);
  const Tensor& first = **tensors.begin();
  for (const Tensor* t : tensors) {
    TS_CHECK(t->device() == first.device(), op, ": tensors on different devices: ", first.describe(), " and ",
             t->describe());
  }
}

void check_floating(absl::string_view op, const Tensor& t) {
  check_defined(op, t);
  TS_CHECK(is_floating(t.dtype()), op, ": expects a floating-point tensor, got ", t.describe());
}

Tensor as_index(absl::string_view op, const Tensor& index) {
  check_defined(op, index);
  TS_CHECK(index.dtype() == DType::kI64 || index.dtype() == DType::kI32, op, ": index must be i32 or i64, got ",
           index.describe());
  return contiguous(to(index, DType::kI64));
}

void check_index_range(absl::string_view op, const Tensor& index, int64_t size, int64_t dim) {
  if (index.numel() == 0) return;
  // One read of both bounds: on a GPU each read waits for the stream.
  const std::vector<int64_t> bounds = to_vector<int64_t>(stack({min(index), max(index)}, 0));
  const int64_t lo = bounds[0], hi = bounds[1];
  TS_CHECK_INDEX(lo >= 0 && hi < size, op, ": index ", lo < 0 ? lo : hi, " is out of range for dim ", dim, " of size ",
                 size);
}

void check_storable(absl::string_view op, const Scalar& value, DType dtype) {
  const bool fits = visit_dtype_as<Half, BFloat16>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return true;
    } else if constexpr (std::is_integral_v<T>) {
      // Compared in long double, which holds every int64 and the bounds.
      constexpr long double lowest = std::numeric_limits<T>::lowest(), max = std::numeric_limits<T>::max();
      if (value.is_floating()) {
        const long double v = std::trunc(static_cast<long double>(value.to_double()));
        return std::isfinite(v) && v >= lowest && v <= max;
      }
      const auto v = static_cast<long double>(value.to_int64());
      return v >= (std::is_unsigned_v<T> ? -max : lowest) && v <= max;
    } else {
      return !std::isfinite(value.to_double()) || std::isfinite(static_cast<double>(value.to<T>()));
    }
  });
  TS_CHECK(fits, op, ": the value ", value.to_string(), " cannot be stored in ", dtype_name(dtype),
           " without overflow");
}

}  // namespace ts
