#include "nn/losses.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::nn {
namespace {

absl::Status with_op(absl::string_view op, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(op, ": ", status.message()));
}

absl::StatusOr<Variable> reduce(const Variable& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::kNone:
      return loss;
    case Reduction::kMean:
      return autograd::mean(loss);
    case Reduction::kSum:
      return autograd::sum(loss);
  }
  return absl::InvalidArgumentError("unknown Reduction");
}

// Class scores [N, C] and integer targets [N]; returns targets as [N, 1] for
// gather. Values out of [0, C) are reported by gather, naming the index.
absl::StatusOr<Tensor> class_index(absl::string_view op, const Tensor& scores, const Tensor& target) {
  if (scores.dim() != 2 || target.dim() != 1 || target.size(0) != scores.size(0) ||
      !is_integral(target.dtype()) || target.dtype() == DType::kU8) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": needs scores [N, C] and i32/i64 class indices [N], got ", scores.describe(),
        " and ", target.defined() ? target.describe() : "an undefined target"));
  }
  return target.unsqueeze(1);
}

absl::Status check_same_shape(absl::string_view op, const Tensor& a, const Tensor& b) {
  if (!b.defined() || a.shape() != b.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": input ", a.describe(), " and target ",
                                                   b.defined() ? b.describe() : "(undefined)",
                                                   " must have the same shape"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Variable> nll_unreduced(const Variable& log_probs, const Tensor& target) {
  ASSIGN_OR_RETURN(Tensor index, class_index("nll_loss", log_probs.data(), target));
  ASSIGN_OR_RETURN(Variable picked, autograd::gather(log_probs, 1, index));
  ASSIGN_OR_RETURN(picked, autograd::reshape(picked, {log_probs.size(0)}));
  return autograd::neg(picked);
}

absl::StatusOr<Variable> bce_with_logits_unreduced(const Variable& logits, const Tensor& target) {
  const Tensor& x = logits.data();
  RETURN_IF_ERROR(check_same_shape("binary_cross_entropy_with_logits", x, target));
  if (!is_floating(x.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "binary_cross_entropy_with_logits: logits must be floating-point, got ", x.describe()));
  }
  ASSIGN_OR_RETURN(Tensor y, to(target, x.dtype()));
  // max(x, 0) - x*y + log(1 + exp(-|x|)): exp never overflows.
  ASSIGN_OR_RETURN(Tensor abs_x, abs(x));
  ASSIGN_OR_RETURN(Tensor neg_abs, neg(abs_x));
  ASSIGN_OR_RETURN(Tensor e, exp(neg_abs));
  ASSIGN_OR_RETURN(Tensor softplus, log1p(e));
  ASSIGN_OR_RETURN(Tensor pos, relu(x));
  ASSIGN_OR_RETURN(Tensor xy, mul(x, y));
  ASSIGN_OR_RETURN(Tensor loss, sub(pos, xy));
  ASSIGN_OR_RETURN(loss, add(loss, softplus));
  return autograd::record(
      "binary_cross_entropy_with_logits", {logits}, std::move(loss),
      [x, y](const autograd::GradContext& ctx) -> absl::StatusOr<std::vector<Tensor>> {
        ASSIGN_OR_RETURN(Tensor s, sigmoid(x));
        ASSIGN_OR_RETURN(Tensor d, sub(s, y));
        ASSIGN_OR_RETURN(d, mul(d, ctx.grad(0)));
        return std::vector<Tensor>{std::move(d)};
      });
}

template <typename F>
absl::StatusOr<Variable> regularization(absl::string_view op, absl::Span<const Variable> parameters,
                                        double coefficient, F&& per_parameter) {
  if (parameters.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": no parameters"));
  }
  Variable total;
  for (const Variable& p : parameters) {
    ASSIGN_OR_RETURN(Variable term, per_parameter(p));
    ASSIGN_OR_RETURN(term, autograd::sum(term));
    if (total.defined()) {
      ASSIGN_OR_RETURN(total, autograd::add(total, term));
    } else {
      total = term;
    }
  }
  return autograd::mul(total, coefficient);
}

}  // namespace

absl::StatusOr<Variable> nll_loss(const Variable& log_probs, const Tensor& target,
                                  Reduction reduction) {
  absl::StatusOr<Variable> loss = nll_unreduced(log_probs, target);
  if (!loss.ok()) return with_op("nll_loss", loss.status());
  return reduce(*loss, reduction);
}

absl::StatusOr<Variable> cross_entropy(const Variable& logits, const Tensor& target,
                                       CrossEntropyOptions options) {
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cross_entropy: label_smoothing ", options.label_smoothing, " is not in [0, 1]"));
  }
  RETURN_IF_ERROR(class_index("cross_entropy", logits.data(), target).status());
  ASSIGN_OR_RETURN(Variable log_probs, autograd::log_softmax(logits, 1));
  absl::StatusOr<Variable> nll = nll_unreduced(log_probs, target);
  if (!nll.ok()) return with_op("cross_entropy", nll.status());
  Variable loss = *std::move(nll);
  const double s = options.label_smoothing;
  if (s > 0) {
    const double classes = static_cast<double>(logits.size(1));
    ASSIGN_OR_RETURN(Variable total, autograd::sum(log_probs, {1}));
    ASSIGN_OR_RETURN(Variable smooth, autograd::mul(total, -s / classes));
    ASSIGN_OR_RETURN(loss, autograd::mul(loss, 1 - s));
    ASSIGN_OR_RETURN(loss, autograd::add(loss, smooth));
  }
  return reduce(loss, options.reduction);
}

absl::StatusOr<Variable> binary_cross_entropy_with_logits(const Variable& logits,
                                                          const Tensor& target,
                                                          Reduction reduction) {
  ASSIGN_OR_RETURN(Variable loss, bce_with_logits_unreduced(logits, target));
  return reduce(loss, reduction);
}

absl::StatusOr<Variable> l1_loss(const Variable& input, const Variable& target,
                                 Reduction reduction) {
  RETURN_IF_ERROR(check_same_shape("l1_loss", input.data(), target.data()));
  ASSIGN_OR_RETURN(Variable diff, autograd::sub(input, target));
  ASSIGN_OR_RETURN(Variable loss, autograd::abs(diff));
  return reduce(loss, reduction);
}

absl::StatusOr<Variable> mse_loss(const Variable& input, const Variable& target,
                                  Reduction reduction) {
  RETURN_IF_ERROR(check_same_shape("mse_loss", input.data(), target.data()));
  ASSIGN_OR_RETURN(Variable diff, autograd::sub(input, target));
  ASSIGN_OR_RETURN(Variable loss, autograd::square(diff));
  return reduce(loss, reduction);
}

absl::StatusOr<Variable> l1_regularization(absl::Span<const Variable> parameters, double l1) {
  return regularization("l1_regularization", parameters, l1,
                        [](const Variable& p) { return autograd::abs(p); });
}

absl::StatusOr<Variable> l2_regularization(absl::Span<const Variable> parameters, double l2) {
  return regularization("l2_regularization", parameters, l2 / 2,
                        [](const Variable& p) { return autograd::square(p); });
}

absl::StatusOr<int64_t> topk_correct(const Tensor& logits, const Tensor& target, int64_t k) {
  if (k < 1) return absl::InvalidArgumentError(absl::StrCat("topk_correct: k = ", k, " < 1"));
  ASSIGN_OR_RETURN(Tensor index, class_index("topk_correct", logits, target));
  // The target is in the top k when fewer than k logits beat it: no sort.
  ASSIGN_OR_RETURN(Tensor target_logit, gather(logits, 1, index));
  ASSIGN_OR_RETURN(Tensor beaten_by, gt(logits, target_logit));
  ASSIGN_OR_RETURN(Tensor rank, sum(beaten_by, {1}));
  ASSIGN_OR_RETURN(Tensor hit, lt(rank, k));
  ASSIGN_OR_RETURN(Tensor count, sum(hit));
  return item<int64_t>(count);
}

absl::StatusOr<double> accuracy(const Tensor& logits, const Tensor& target, int64_t k) {
  ASSIGN_OR_RETURN(int64_t correct, topk_correct(logits, target, k));
  return logits.size(0) == 0 ? 0.0 : static_cast<double>(correct) / logits.size(0);
}

absl::StatusOr<int64_t> binary_correct(const Tensor& logits, const Tensor& target) {
  if (!logits.defined() || !target.defined() || logits.numel() != target.numel() ||
      (logits.dim() == 2 && logits.size(1) != 1) || logits.dim() > 2 || target.dim() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "binary_correct: needs logits [N] or [N, 1] and targets [N], got ",
        logits.defined() ? logits.describe() : "undefined", " and ",
        target.defined() ? target.describe() : "undefined"));
  }
  ASSIGN_OR_RETURN(Tensor flat, reshape(logits, {logits.size(0)}));
  ASSIGN_OR_RETURN(Tensor predicted, gt(flat, 0));
  ASSIGN_OR_RETURN(Tensor truth, gt(target, 0.5));
  ASSIGN_OR_RETURN(Tensor agree, eq(predicted, truth));
  ASSIGN_OR_RETURN(Tensor count, sum(agree));
  return item<int64_t>(count);
}

}  // namespace ts::nn
