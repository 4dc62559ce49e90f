// Loss functions (PyTorch's definitions and reductions), L1/L2 regularization
// terms over parameters, and classification accuracy helpers. A misuse (shapes
// that do not match, a target of the wrong dtype, a class out of range) throws
// ts::Error naming the loss and the shapes. f16/bf16 inputs compute in f32 and
// give an f32 loss, as under PyTorch's autocast and apex's O2.
#pragma once

#include <cstdint>

#include "absl/types/span.h"
#include "autograd/variable.h"
#include "tensor/tensor.h"

namespace ts::nn {

using autograd::Variable;

enum class Reduction { kNone, kMean, kSum };

struct CrossEntropyOptions {
  Reduction reduction = Reduction::kMean;
  // Rows whose target is this add nothing to the loss, its gradient or the
  // mean's denominator.
  int64_t ignore_index = -100;
  // Class weights [C] (floating, on the logits' device); undefined: all 1.
  Tensor weight;
  // PyTorch's formula: (1 - s) * nll + s / C * sum_c w_c * (-log_softmax_c).
  double label_smoothing = 0;
};

// torch.nn.functional.cross_entropy for logits [N, C] and class indices
// target [N] (i32/i64, in [0, C) or ignore_index): each row's loss
// w[t] * (-log_softmax(x)[t]) (with label smoothing, the formula above).
// kMean divides the sum by the sum of w[t] over the rows not ignored (NaN when
// every row is ignored, as in PyTorch).
// One fused kernel forward and one backward (ts::cross_entropy_rows). A class
// out of range is an Error on the CPU; on CUDA, where checking would stall
// the host every step, its row's loss is NaN instead.
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& options = {});
// log_probs [N, C] (log_softmax output), target [N]: -log_probs[i, target[i]].
Variable nll_loss(const Variable& log_probs, const Tensor& target, Reduction reduction = Reduction::kMean);
// max(x, 0) - x*y + log(1 + exp(-|x|)) elementwise, stable for any logit x;
// target y in [0, 1], same shape as the logits. Gradient sigmoid(x) - y.
Variable binary_cross_entropy_with_logits(const Variable& logits, const Tensor& target,
                                          Reduction reduction = Reduction::kMean);
// |input - target| and (input - target)^2, same shapes.
Variable l1_loss(const Variable& input, const Variable& target, Reduction reduction = Reduction::kMean);
Variable mse_loss(const Variable& input, const Variable& target, Reduction reduction = Reduction::kMean);

// Regularization terms as MLBench's BCELossRegularized adds them:
// l1 * sum_p ||p||_1 and (l2 / 2) * sum_p ||p||_2^2 (the MLBench logistic
// regression uses l2 = 2.5e-6). A 0-dim Variable in the parameters' dtype
// (f32 for f16/bf16 ones).
Variable l1_regularization(absl::Span<const Variable> parameters, double l1);
Variable l2_regularization(absl::Span<const Variable> parameters, double l2);

// AWD-LSTM's activation regularizers on an RNN's outputs h [T, B, H]
// (time-major): AR = alpha * mean(h^2) (applied to the dropped-out outputs)
// and TAR = beta * mean((h[t] - h[t-1])^2) over t = 1..T-1 (to the outputs
// before dropout). 0-dim Variables; TAR of a single step is 0.
Variable activation_regularization(const Variable& h, double alpha);
Variable temporal_activation_regularization(const Variable& h, double beta);

// How many rows of logits [N, C] have their target among the k largest
// logits; of tied logits the lower class index ranks first (as argmax's
// first maximum), a NaN logit beats every other (as in PyTorch's topk). A 0-dim i64
// tensor on the logits' device: an evaluation loop sums these without
// reading each back.
Tensor topk_correct(const Tensor& logits, const Tensor& target, int64_t k = 1);
// topk_correct / N, read back to the host.
double accuracy(const Tensor& logits, const Tensor& target, int64_t k = 1);
// Binary classification: how many of logits [N] (or [N, 1]) have
// (logit > 0) == (target > 0.5); a 0-dim i64 tensor on the logits' device.
Tensor binary_correct(const Tensor& logits, const Tensor& target);

}  // namespace ts::nn
