#include "tensor/ops/checks.h"

#include "absl/strings/str_cat.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::ops_internal {

absl::Status check_defined(absl::string_view op, const Tensor& t) {
  if (!t.defined()) return absl::InvalidArgumentError(absl::StrCat(op, ": undefined tensor"));
  return absl::OkStatus();
}

absl::Status check_same_device(absl::string_view op, absl::Span<const Tensor* const> tensors) {
  for (const Tensor* t : tensors) RETURN_IF_ERROR(check_defined(op, *t));
  for (const Tensor* t : tensors) {
    if (t->device() != tensors[0]->device()) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": tensors on different devices: ",
                                                     tensors[0]->describe(), " and ", t->describe()));
    }
  }
  return absl::OkStatus();
}

absl::Status check_floating(absl::string_view op, const Tensor& t) {
  RETURN_IF_ERROR(check_defined(op, t));
  if (!is_floating(t.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": expects a floating-point tensor, got ", t.describe()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> as_index(absl::string_view op, const Tensor& index) {
  RETURN_IF_ERROR(check_defined(op, index));
  if (index.dtype() != DType::kI64 && index.dtype() != DType::kI32) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": index must be i32 or i64, got ", index.describe()));
  }
  ASSIGN_OR_RETURN(Tensor as_i64, to(index, DType::kI64));
  return contiguous(as_i64);
}

absl::Status check_index_range(absl::string_view op, const Tensor& index, int64_t size, int64_t dim) {
  if (index.numel() == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(Tensor lo, min(index));
  ASSIGN_OR_RETURN(Tensor hi, max(index));
  ASSIGN_OR_RETURN(int64_t lo_value, item<int64_t>(lo));
  ASSIGN_OR_RETURN(int64_t hi_value, item<int64_t>(hi));
  if (lo_value < 0 || hi_value >= size) {
    return absl::OutOfRangeError(absl::StrCat(op, ": index ", lo_value < 0 ? lo_value : hi_value,
                                              " is out of range for dim ", dim, " of size ", size));
  }
  return absl::OkStatus();
}

}  // namespace ts::ops_internal
