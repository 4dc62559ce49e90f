// Logistic regression as MLBench's LogisticRegression: one bias-free Linear
// from n_features to a single logit (state dict "linear.weight"). It returns
// the logit, not the probability: pair it with
// binary_cross_entropy_with_logits, which is the stable form of MLBench's
// sigmoid + BCE.
#pragma once

#include <cstdint>
#include <memory>

#include "nn/linear.h"
#include "nn/module.h"

namespace ts::nn::models {

class LogisticRegression final : public Module {
 public:
  explicit LogisticRegression(int64_t n_features);
  // x [N, n_features] -> logits [N].
  Variable forward(const Variable& x);

 private:
  Handle<Linear> linear_;
};

std::shared_ptr<LogisticRegression> logistic_regression(int64_t n_features);

}  // namespace ts::nn::models
