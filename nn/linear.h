// Linear: y = x W^T + b over the last dim, with PyTorch's default
// initialization (weight kaiming_uniform_(a = sqrt(5)), bias uniform in
// +-1/sqrt(in_features)).
#pragma once

#include <cstdint>

#include "nn/module.h"

namespace ts::nn {

class Linear final : public Module {
 public:
  // weight [out_features, in_features], bias [out_features] (when `bias`).
  // Sizes must be positive.
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  // x [..., in_features] -> [..., out_features].
  Variable forward(const Variable& x);

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }

 private:
  int64_t in_features_;
  int64_t out_features_;
};

}  // namespace ts::nn
