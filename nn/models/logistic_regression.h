// Logistic regression as MLBench's LogisticRegression: one bias-free Linear
// from n_features to a single logit (state dict "linear.weight"). It returns
// the logit, not the probability: pair it with
// binary_cross_entropy_with_logits, which is the stable form of MLBench's
// sigmoid + BCE.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "nn/module.h"

namespace ts::nn::models {

// Input [N, n_features], output logits [N].
absl::StatusOr<std::shared_ptr<Module>> logistic_regression(int64_t n_features);

}  // namespace ts::nn::models
