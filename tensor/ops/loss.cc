// The fused cross-entropy kernels' frontends: validation, dtypes and the
// weight sum the label-smoothing term needs.
#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts {
namespace {

// The dtype the kernels accumulate in and keep per-row values in.
DType loss_compute_dtype(DType logits) { return logits == DType::kF64 ? DType::kF64 : DType::kF32; }

struct Prepared {
  Tensor logits;      // contiguous
  Tensor target;      // contiguous i64
  Tensor weight;      // compute dtype, contiguous, or undefined
  Tensor weight_sum;  // 0-dim, when weight and smoothing are both present
};

// Both the loss and its gradient check the target range on the CPU (one
// pass over N targets): the gradient is a public op too, and indexes rows by
// its targets.
Prepared prepare(const char* op, const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                 double label_smoothing) {
  check_floating(op, logits);
  check_same_device(op, {&logits, &target});
  TS_CHECK(logits.dim() == 2 && target.dim() == 1 && target.size(0) == logits.size(0) &&
               (target.dtype() == DType::kI64 || target.dtype() == DType::kI32),
           op, ": needs logits [N, C] and i32/i64 class indices [N], got ", logits.describe(), " and ",
           target.describe());
  TS_CHECK(label_smoothing >= 0 && label_smoothing <= 1, op, ": label_smoothing ", label_smoothing,
           " is not in [0, 1]");
  const int64_t classes = logits.size(1);
  Prepared p;
  p.logits = contiguous(logits);
  p.target = as_index(op, target);
  if (weight.defined()) {
    check_same_device(op, {&logits, &weight});
    check_floating(op, weight);
    TS_CHECK(weight.dim() == 1 && weight.size(0) == classes, op, ": class weights ", weight.describe(),
             " do not match the ", classes, " classes of ", logits.describe());
    p.weight = contiguous(to(weight, loss_compute_dtype(logits.dtype())));
    if (label_smoothing > 0) p.weight_sum = sum(p.weight);
  }
  // On the host the check costs nothing; on CUDA the kernels mark a bad
  // target's row NaN instead of stalling the host (see ops.h).
  if (logits.device().is_cpu() && p.target.numel() > 0) {
    const Tensor valid = logical_or(logical_and(ge(p.target, 0), lt(p.target, classes)), eq(p.target, ignore_index));
    if (!item<bool>(min(to(valid, DType::kU8)))) {
      const int64_t bad = item<int64_t>(argmin(to(valid, DType::kU8)));
      throw_error(absl::StatusCode::kOutOfRange, op, ": target ", item<int64_t>(p.target.select(0, bad)), " of row ",
                  bad, " is not a class of ", logits.describe(), " (nor ignore_index ", ignore_index, ")");
    }
  }
  return p;
}

}  // namespace

CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, const Tensor& weight,
                                    int64_t ignore_index, double label_smoothing) {
  const Prepared p = prepare("cross_entropy", logits, target, weight, ignore_index, label_smoothing);
  const int64_t n = logits.size(0);
  const DType compute = loss_compute_dtype(logits.dtype());
  CrossEntropyRows rows{empty({n}, {compute, logits.device()}), empty({n}, {compute, logits.device()}),
                        empty({n}, {compute, logits.device()})};
  if (n > 0) {
    TS_CHECK(logits.size(1) > 0, "cross_entropy: no classes in ", logits.describe());
    backend_for(logits.device())
        .cross_entropy(p.logits, p.target, p.weight, p.weight_sum, ignore_index, label_smoothing, rows.loss,
                       rows.row_weight, rows.logsumexp);
  }
  return rows;
}

Tensor cross_entropy_rows_grad(const Tensor& grad, const Tensor& logits, const Tensor& target, const Tensor& weight,
                               const Tensor& logsumexp, int64_t ignore_index, double label_smoothing) {
  const Prepared p = prepare("cross_entropy backward", logits, target, weight, ignore_index, label_smoothing);
  const int64_t n = logits.size(0);
  const DType compute = loss_compute_dtype(logits.dtype());
  check_same_device("cross_entropy backward", {&logits, &grad, &logsumexp});
  TS_CHECK(grad.dim() == 1 && grad.size(0) == n && logsumexp.dim() == 1 && logsumexp.size(0) == n,
           "cross_entropy backward: gradient ", grad.describe(), " and logsumexp ", logsumexp.describe(),
           " must have one value per row of ", logits.describe());
  Tensor out = empty(logits.shape(), {logits.dtype(), logits.device()});
  if (out.numel() > 0) {
    backend_for(logits.device())
        .cross_entropy_grad(contiguous(to(grad, compute)), p.logits, p.target, p.weight, p.weight_sum,
                            contiguous(to(logsumexp, compute)), ignore_index, label_smoothing, out);
  }
  return out;
}

}  // namespace ts
