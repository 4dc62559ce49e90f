#include "nn/batch_norm.h"

#include "base/error.h"
#include "nn/functional.h"
#include "tensor/ops.h"

namespace ts::nn {

BatchNorm2d::BatchNorm2d(int64_t num_features, BatchNormOptions options)
    : Module("BatchNorm2d"), num_features_(num_features), options_(options) {
  TS_CHECK(num_features > 0 && options.eps > 0 && options.momentum >= 0 && options.momentum <= 1,
           "BatchNorm2d(num_features=", num_features, ", eps=", options.eps, ", momentum=", options.momentum,
           "): needs num_features > 0, eps > 0 and momentum in [0, 1]");
  register_parameter("weight", ones({num_features}));
  register_parameter("bias", zeros({num_features}));
  register_buffer("running_mean", zeros({num_features}));
  register_buffer("running_var", ones({num_features}));
  register_buffer("num_batches_tracked", zeros({}, {DType::kI64}));
}

void BatchNorm2d::start_forward(const Variable& x) {
  TS_CHECK(x.dim() == 4 && x.size(1) == num_features_, "BatchNorm2d(", num_features_, "): input ", x.data().describe(),
           " must be [N, ", num_features_, ", H, W]");
  if (is_training()) {
    // Counted on the device: no host round trip per step.
    const Tensor& count = buffer("num_batches_tracked");
    copy_(count, count + 1);
  }
}

Variable BatchNorm2d::forward(const Variable& x) {
  start_forward(x);
  return functional::batch_norm(x, buffer("running_mean"), buffer("running_var"), param("weight"), param("bias"),
                                is_training(), options_.momentum, options_.eps);
}

Variable BatchNorm2d::forward_relu(const Variable& x, const Variable& residual) {
  start_forward(x);
  return functional::batch_norm_relu(x, residual, buffer("running_mean"), buffer("running_var"), param("weight"),
                                     param("bias"), is_training(), options_.momentum, options_.eps);
}

}  // namespace ts::nn
