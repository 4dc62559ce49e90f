#include "nn/dropout.h"

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::nn {

absl::StatusOr<std::shared_ptr<Dropout>> Dropout::create(double p) {
  if (!(p >= 0 && p <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("Dropout(p=", p, "): p must be in [0, 1]"));
  }
  return std::shared_ptr<Dropout>(new Dropout(p));
}

absl::StatusOr<Variable> Dropout::forward(const Variable& x) {
  if (!is_training() || p_ == 0) return x;
  if (!is_floating(x.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrCat("Dropout: needs a floating-point input, got ", x.data().describe()));
  }
  // The mask holds 0 or 1/(1-p), so forward and backward are one multiply.
  ASSIGN_OR_RETURN(Tensor keep, bernoulli(x.shape(), 1 - p_, {x.dtype(), x.device()}));
  ASSIGN_OR_RETURN(Tensor mask, mul(keep, p_ < 1 ? 1 / (1 - p_) : 0.0));
  return autograd::mul(x, Variable(mask));
}

}  // namespace ts::nn
