// BatchNorm2d over [N, C, H, W]: learnable per-channel scale (weight, 1) and
// shift (bias, 0); running_mean/running_var buffers updated with `momentum`
// in training and used in eval; num_batches_tracked counts training batches
// (kept for state dicts that line up with PyTorch's).
#pragma once

#include <cstdint>

#include "nn/module.h"

namespace ts::nn {

struct BatchNormOptions {
  double eps = 1e-5;
  double momentum = 0.1;
};

class BatchNorm2d final : public Module {
 public:
  // Needs num_features > 0, eps > 0 and momentum in [0, 1].
  explicit BatchNorm2d(int64_t num_features, BatchNormOptions options = {});
  // x [N, num_features, H, W] -> the same shape.
  Variable forward(const Variable& x);
  // relu(forward(x) + residual), or relu(forward(x)) without a residual (of
  // x's shape): a ResNet block's tail, one fused kernel where the device
  // has one (functional::batch_norm_relu).
  Variable forward_relu(const Variable& x, const Variable& residual = Variable());

  int64_t num_features() const { return num_features_; }

 private:
  // Checks x and, in training, counts the batch.
  void start_forward(const Variable& x);

  int64_t num_features_;
  BatchNormOptions options_;
};

}  // namespace ts::nn
