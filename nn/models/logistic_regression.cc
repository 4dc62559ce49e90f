#include "nn/models/logistic_regression.h"

#include "autograd/ops.h"

namespace ts::nn::models {

LogisticRegression::LogisticRegression(int64_t n_features)
    : Module("LogisticRegression"),
      linear_(register_module("linear", std::make_shared<Linear>(n_features, 1, /*bias=*/false))) {}

// [N, 1] -> [N], to line up with a label vector.
Variable LogisticRegression::forward(const Variable& x) { return squeeze(linear_(x), -1); }

std::shared_ptr<LogisticRegression> logistic_regression(int64_t n_features) {
  return std::make_shared<LogisticRegression>(n_features);
}

}  // namespace ts::nn::models
