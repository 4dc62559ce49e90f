// Loss functions (PyTorch's definitions and reductions), L1/L2 regularization
// terms over parameters, and classification accuracy helpers.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "autograd/variable.h"
#include "tensor/tensor.h"

namespace ts::nn {

using autograd::Variable;

enum class Reduction { kNone, kMean, kSum };

struct CrossEntropyOptions {
  Reduction reduction = Reduction::kMean;
  // PyTorch's formula: (1 - s) * nll + s * (-sum_c log_softmax_c) / C.
  double label_smoothing = 0;
};

// logits [N, C], target integer class indices [N] in [0, C).
absl::StatusOr<Variable> cross_entropy(const Variable& logits, const Tensor& target,
                                       CrossEntropyOptions options = {});
// log_probs [N, C] (log_softmax output), target [N]: -log_probs[i, target[i]].
absl::StatusOr<Variable> nll_loss(const Variable& log_probs, const Tensor& target,
                                  Reduction reduction = Reduction::kMean);
// Elementwise max(x, 0) - x*y + log(1 + exp(-|x|)), stable for any logit x;
// target y in [0, 1], same shape as logits. Gradient sigmoid(x) - y (a fused
// op: exact at x = 0, where a composition of abs and relu is not).
absl::StatusOr<Variable> binary_cross_entropy_with_logits(const Variable& logits,
                                                          const Tensor& target,
                                                          Reduction reduction = Reduction::kMean);
// |input - target| and (input - target)^2, same shapes.
absl::StatusOr<Variable> l1_loss(const Variable& input, const Variable& target,
                                 Reduction reduction = Reduction::kMean);
absl::StatusOr<Variable> mse_loss(const Variable& input, const Variable& target,
                                  Reduction reduction = Reduction::kMean);

// Regularization terms as MLBench's BCELossRegularized adds them:
// l1 * sum_p ||p||_1 and (l2 / 2) * sum_p ||p||_2^2 (the MLBench logistic
// regression uses l2 = 2.5e-6). A 0-dim Variable in the parameters' dtype.
absl::StatusOr<Variable> l1_regularization(absl::Span<const Variable> parameters, double l1);
absl::StatusOr<Variable> l2_regularization(absl::Span<const Variable> parameters, double l2);

// How many rows of logits [N, C] have their target among the k largest
// logits; a tie with the target's logit counts in its favour. Runs on the
// logits' device and reads back one number.
absl::StatusOr<int64_t> topk_correct(const Tensor& logits, const Tensor& target, int64_t k = 1);
// topk_correct / N.
absl::StatusOr<double> accuracy(const Tensor& logits, const Tensor& target, int64_t k = 1);
// Binary classification: how many of logits [N] (or [N, 1]) have
// (logit > 0) == (target > 0.5).
absl::StatusOr<int64_t> binary_correct(const Tensor& logits, const Tensor& target);

}  // namespace ts::nn
