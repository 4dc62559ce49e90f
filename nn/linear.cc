#include "nn/linear.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "nn/init.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::nn {

absl::StatusOr<std::shared_ptr<Linear>> Linear::create(int64_t in_features, int64_t out_features,
                                                       bool bias) {
  if (in_features <= 0 || out_features <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("Linear(in_features=", in_features,
                                                   ", out_features=", out_features,
                                                   "): sizes must be positive"));
  }
  std::shared_ptr<Linear> m(new Linear(in_features, out_features));
  ASSIGN_OR_RETURN(Tensor weight, empty({out_features, in_features}));
  RETURN_IF_ERROR(init::kaiming_uniform_(weight, std::sqrt(5.0)));
  m->register_parameter("weight", weight);
  if (bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    ASSIGN_OR_RETURN(Tensor b, uniform({out_features}, -bound, bound));
    m->register_parameter("bias", b);
  }
  return m;
}

absl::StatusOr<Variable> Linear::forward(const Variable& x) {
  if (x.dim() < 1 || x.size(-1) != in_features_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Linear(in_features=", in_features_, ", out_features=", out_features_, "): input ",
        x.data().describe(), " needs ", in_features_, " features in its last dim"));
  }
  ASSIGN_OR_RETURN(Variable wt, autograd::transpose(param("weight"), 0, 1));
  ASSIGN_OR_RETURN(Variable y, autograd::matmul(x, wt));
  if (!has_param("bias")) return y;
  return autograd::add(y, param("bias"));
}

}  // namespace ts::nn
