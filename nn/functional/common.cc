#include "nn/functional/common.h"

#include "absl/strings/str_cat.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::nn::functional {

DType compute_dtype(const Tensor& t) {
  return t.device().is_cpu() && is_reduced_float(t.dtype()) ? DType::kF32 : t.dtype();
}

absl::StatusOr<Tensor> as_dense(const Tensor& t, DType dtype) {
  ASSIGN_OR_RETURN(Tensor converted, ts::to(t, dtype));
  return ts::contiguous(converted);
}

absl::Status check_floating(absl::string_view op, absl::string_view what, const Tensor& t) {
  if (!t.defined()) return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " is undefined"));
  if (!is_floating(t.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " must be floating-point, got ", t.describe()));
  }
  return absl::OkStatus();
}

absl::Status check_same_device(absl::string_view op, absl::string_view what, const Tensor& t,
                               const Tensor& x) {
  if (!(t.device() == x.device())) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": ", what, " ", t.describe(), " is not on the input's device (input ", x.describe(), ")"));
  }
  return absl::OkStatus();
}

absl::Status check_channel_vector(absl::string_view op, absl::string_view what, const Tensor& t,
                                  const Tensor& x) {
  RETURN_IF_ERROR(check_floating(op, what, t));
  if (t.dim() != 1 || t.size(0) != x.size(1)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", what, " ", t.describe(), " must be [", x.size(1),
                                                   "] for input ", x.describe()));
  }
  return check_same_device(op, what, t, x);
}

}  // namespace ts::nn::functional
