#include "nn/losses.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::nn {
namespace {

// Losses compute in f32 for f16/bf16 inputs and return f32 (autocast's and
// apex O2's policy): a sum over a batch overflows f16, and a loss scaled by
// the loss scaler must not round through f16 either.
Variable in_f32(const Variable& x) { return is_reduced_float(x.dtype()) ? autograd::to(x, DType::kF32) : x; }

Variable reduce(const Variable& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::kNone:
      return loss;
    case Reduction::kMean:
      return autograd::mean(loss);
    case Reduction::kSum:
      return autograd::sum(loss);
  }
  throw_error(absl::StatusCode::kInvalidArgument, "unknown Reduction ", static_cast<int>(reduction));
}

// Class scores [N, C] and integer targets [N]; returns targets as [N, 1] for
// gather. Values out of [0, C) are reported by gather, naming the index.
Tensor class_index(absl::string_view op, const Tensor& scores, const Tensor& target) {
  TS_CHECK(scores.dim() == 2 && target.dim() == 1 && target.size(0) == scores.size(0) &&
               (target.dtype() == DType::kI32 || target.dtype() == DType::kI64),
           op, ": needs scores [N, C] and i32/i64 class indices [N], got ", scores.describe(), " and ",
           target.describe());
  return target.unsqueeze(1);
}

void check_same_shape(absl::string_view op, const Tensor& input, const Tensor& target) {
  TS_CHECK(input.defined() && target.defined() && input.shape() == target.shape(), op, ": input ", input.describe(),
           " and target ", target.describe(), " must have the same shape");
}

template <typename F>
Variable regularization(absl::string_view op, absl::Span<const Variable> parameters, double coefficient,
                        F&& per_parameter) {
  TS_CHECK(!parameters.empty(), op, ": no parameters");
  Variable total = autograd::sum(per_parameter(in_f32(parameters[0])));
  for (const Variable& p : parameters.subspan(1)) total = total + autograd::sum(per_parameter(in_f32(p)));
  return total * coefficient;
}

}  // namespace

Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& options) {
  const int64_t ignore_index = options.ignore_index;
  const double smoothing = options.label_smoothing;
  CrossEntropyRows rows = cross_entropy_rows(logits.data(), target, options.weight, ignore_index, smoothing);
  const Variable loss =
      autograd::record("cross_entropy", {logits}, std::move(rows.loss),
                       [x = logits.data(), target, weight = options.weight, logsumexp = rows.logsumexp, ignore_index,
                        smoothing](const autograd::GradContext& ctx) {
                         return std::vector<Tensor>{cross_entropy_rows_grad(ctx.grad(), x, target, weight, logsumexp,
                                                                            ignore_index, smoothing)};
                       });
  // The rows are f32 for f16/bf16 logits (ts::cross_entropy_rows).
  if (options.reduction != Reduction::kMean) return reduce(loss, options.reduction);
  // The mean divides by the kept rows' weights, not N.
  return autograd::sum(loss) / Variable(sum(rows.row_weight));
}

Variable nll_loss(const Variable& log_probs, const Tensor& target, Reduction reduction) {
  const Tensor index = class_index("nll_loss", log_probs.data(), target);
  Variable picked;
  try {
    picked = autograd::gather(in_f32(log_probs), 1, index);
  } catch (const Error& e) {
    // gather names the index out of range; say which loss it came from.
    throw Error(e.code(), absl::StrCat("nll_loss: ", e.message()));
  }
  return reduce(-autograd::reshape(picked, {log_probs.size(0)}), reduction);
}

Variable binary_cross_entropy_with_logits(const Variable& logits, const Tensor& target, Reduction reduction) {
  constexpr absl::string_view kOp = "binary_cross_entropy_with_logits";
  check_same_shape(kOp, logits.data(), target);
  TS_CHECK(is_floating(logits.dtype()), kOp, ": logits must be floating-point, got ", logits.data().describe());
  const Variable x = in_f32(logits);
  return reduce(autograd::binary_cross_entropy_with_logits(x, Variable(to(target, x.dtype()))), reduction);
}

Variable l1_loss(const Variable& input, const Variable& target, Reduction reduction) {
  check_same_shape("l1_loss", input.data(), target.data());
  return reduce(autograd::abs(in_f32(input) - in_f32(target)), reduction);
}

Variable mse_loss(const Variable& input, const Variable& target, Reduction reduction) {
  check_same_shape("mse_loss", input.data(), target.data());
  return reduce(autograd::square(in_f32(input) - in_f32(target)), reduction);
}

Variable l1_regularization(absl::Span<const Variable> parameters, double l1) {
  return regularization("l1_regularization", parameters, l1, [](const Variable& p) { return autograd::abs(p); });
}

Variable l2_regularization(absl::Span<const Variable> parameters, double l2) {
  return regularization("l2_regularization", parameters, l2 / 2, [](const Variable& p) { return autograd::square(p); });
}

Variable activation_regularization(const Variable& h, double alpha) {
  TS_CHECK(h.defined() && is_floating(h.dtype()) && h.numel() > 0,
           "activation_regularization: needs a non-empty floating-point input, got ",
           h.defined() ? h.data().describe() : "undefined");
  return autograd::mean(autograd::square(in_f32(h))) * alpha;
}

Variable temporal_activation_regularization(const Variable& h, double beta) {
  TS_CHECK(h.defined() && is_floating(h.dtype()) && h.dim() >= 1 && h.numel() > 0,
           "temporal_activation_regularization: needs a non-empty floating-point input [T, ...], got ",
           h.defined() ? h.data().describe() : "undefined");
  const int64_t steps = h.size(0);
  const Variable x = in_f32(h);
  if (steps < 2) return Variable(zeros({}, {x.dtype(), x.device()}));
  const Variable change = autograd::narrow(x, 0, 1, steps - 1) - autograd::narrow(x, 0, 0, steps - 1);
  return autograd::mean(autograd::square(change)) * beta;
}

Tensor topk_correct(const Tensor& logits, const Tensor& target, int64_t k) {
  TS_CHECK(k >= 1, "topk_correct: k = ", k, " < 1");
  TS_CHECK(logits.dim() != 2 || k <= logits.size(1), "topk_correct: k = ", k, " is more than the ", logits.size(1),
           " classes of ", logits.describe());
  // The target is in the top k when fewer than k logits beat it: no sort.
  // A tie goes to the lower class index, as argmax's first maximum: counted
  // for the target, ties (frequent among f16 logits) would lift accuracy
  // above what any ranking gives. A NaN beats everything, as in PyTorch's
  // topk (the target's own NaN included): a model gone NaN scores nothing,
  // where comparisons alone, all false, would score every row.
  const Tensor target_index = class_index("topk_correct", logits, target);
  const Tensor target_logit = gather(logits, 1, target_index);
  const Tensor classes = arange(0, static_cast<double>(logits.size(1)), 1, {DType::kI64, logits.device()});
  const Tensor earlier_tie = logical_and(eq(logits, target_logit), lt(classes.unsqueeze(0), target_index));
  const Tensor beaten_by = sum(logical_or(logical_or(gt(logits, target_logit), earlier_tie), isnan(logits)), {1});
  return sum(lt(beaten_by, k));
}

double accuracy(const Tensor& logits, const Tensor& target, int64_t k) {
  const int64_t correct = item<int64_t>(topk_correct(logits, target, k));
  return logits.size(0) == 0 ? 0.0 : static_cast<double>(correct) / logits.size(0);
}

Tensor binary_correct(const Tensor& logits, const Tensor& target) {
  TS_CHECK(logits.defined() && target.defined() && logits.numel() == target.numel() && logits.dim() >= 1 &&
               logits.dim() <= 2 && (logits.dim() == 1 || logits.size(1) == 1) && target.dim() == 1,
           "binary_correct: needs logits [N] or [N, 1] and targets [N], got ", logits.describe(), " and ",
           target.describe());
  const Tensor flat = reshape(logits, {logits.size(0)});
  // A NaN logit predicts nothing, so it is never right.
  return sum(logical_and(eq(gt(flat, 0), gt(target, 0.5)), logical_not(isnan(flat))));
}

}  // namespace ts::nn
