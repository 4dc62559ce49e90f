#include "nn/pooling.h"

namespace ts::nn {

absl::StatusOr<Variable> MaxPool2d::forward(const Variable& x) {
  return functional::max_pool2d(x, options_);
}

absl::StatusOr<Variable> AvgPool2d::forward(const Variable& x) {
  return functional::avg_pool2d(x, options_);
}

absl::StatusOr<Variable> AdaptiveAvgPool2d::forward(const Variable& x) {
  return functional::adaptive_avg_pool2d(x, output_size_);
}

}  // namespace ts::nn
