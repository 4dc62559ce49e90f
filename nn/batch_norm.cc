#include "nn/batch_norm.h"

#include "absl/strings/str_cat.h"
#include "nn/functional.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::nn {

absl::StatusOr<std::shared_ptr<BatchNorm2d>> BatchNorm2d::create(int64_t num_features,
                                                                 BatchNormOptions options) {
  if (num_features <= 0 || !(options.eps > 0) || !(options.momentum >= 0 && options.momentum <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("BatchNorm2d(num_features=", num_features, ", eps=", options.eps,
                     ", momentum=", options.momentum,
                     "): needs num_features > 0, eps > 0 and momentum in [0, 1]"));
  }
  std::shared_ptr<BatchNorm2d> m(new BatchNorm2d(num_features, options));
  ASSIGN_OR_RETURN(Tensor weight, ones({num_features}));
  ASSIGN_OR_RETURN(Tensor bias, zeros({num_features}));
  ASSIGN_OR_RETURN(Tensor running_mean, zeros({num_features}));
  ASSIGN_OR_RETURN(Tensor running_var, ones({num_features}));
  ASSIGN_OR_RETURN(Tensor num_batches_tracked, zeros({}, {DType::kI64}));
  m->register_parameter("weight", weight);
  m->register_parameter("bias", bias);
  m->register_buffer("running_mean", running_mean);
  m->register_buffer("running_var", running_var);
  m->register_buffer("num_batches_tracked", num_batches_tracked);
  return m;
}

absl::StatusOr<Variable> BatchNorm2d::forward(const Variable& x) {
  if (x.dim() != 4 || x.size(1) != num_features_) {
    return absl::InvalidArgumentError(absl::StrCat("BatchNorm2d(", num_features_,
                                                   "): input ", x.data().describe(),
                                                   " must be [N, ", num_features_, ", H, W]"));
  }
  if (is_training()) {
    // Counted on the device: no host round trip per step.
    const Tensor& count = buffer("num_batches_tracked");
    ASSIGN_OR_RETURN(Tensor next, add(count, 1));
    RETURN_IF_ERROR(copy_(count, next));
  }
  return functional::batch_norm(x, buffer("running_mean"), buffer("running_var"), param("weight"),
                                param("bias"), is_training(), options_.momentum, options_.eps);
}

}  // namespace ts::nn
