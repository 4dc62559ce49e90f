#include "tensor/checks.h"

#include <vector>

#include "base/error.h"
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

}  // namespace ts
