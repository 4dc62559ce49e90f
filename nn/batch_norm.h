// BatchNorm2d over [N, C, H, W]: learnable per-channel scale (weight, 1) and
// shift (bias, 0); running_mean/running_var buffers updated with `momentum`
// in training and used in eval; num_batches_tracked counts training batches
// (kept for state dicts that line up with PyTorch's).
#pragma once

#include <cstdint>
#include <memory>

#include "nn/module.h"

namespace ts::nn {

struct BatchNormOptions {
  double eps = 1e-5;
  double momentum = 0.1;
};

class BatchNorm2d final : public Module {
 public:
  static absl::StatusOr<std::shared_ptr<BatchNorm2d>> create(int64_t num_features,
                                                             BatchNormOptions options = {});
  absl::StatusOr<Variable> forward(const Variable& x) override;

  int64_t num_features() const { return num_features_; }

 private:
  BatchNorm2d(int64_t num_features, BatchNormOptions options)
      : Module("BatchNorm2d"), num_features_(num_features), options_(options) {}
  int64_t num_features_;
  BatchNormOptions options_;
};

}  // namespace ts::nn
