#include "nn/dropout.h"

#include "autograd/ops.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::nn {

Dropout::Dropout(double p) : Module("Dropout"), p_(p) {
  TS_CHECK(p >= 0 && p <= 1, "Dropout(p=", p, "): p must be in [0, 1]");
}

namespace {

// A mask of `shape` holding 0 or 1/(1-p), so that forward and backward are
// one multiply.
Tensor inverted_dropout_mask(Dims shape, double p, const Tensor& like) {
  return bernoulli(shape, 1 - p, {like.dtype(), like.device()}) * (p < 1 ? 1 / (1 - p) : 0.0);
}

}  // namespace

Variable dropout(const Variable& x, double p) {
  TS_CHECK(is_floating(x.dtype()), "dropout: needs a floating-point input, got ", x.data().describe());
  return x * Variable(inverted_dropout_mask(x.shape(), p, x.data()));
}

Variable Dropout::forward(const Variable& x) {
  if (!is_training() || p_ == 0) return x;
  return dropout(x, p_);
}

LockedDropout::LockedDropout(double p, bool batch_first) : Module("LockedDropout"), p_(p), batch_first_(batch_first) {
  TS_CHECK(p >= 0 && p <= 1, "LockedDropout(p=", p, "): p must be in [0, 1]");
}

Variable LockedDropout::forward(const Variable& x) {
  if (!is_training() || p_ == 0) return x;
  TS_CHECK(is_floating(x.dtype()) && x.dim() >= 2, "LockedDropout: needs a floating-point input [T, B, ...]",
           batch_first_ ? " (batch first: [B, T, ...])" : "", ", got ", x.data().describe());
  Shape mask_shape = x.shape();
  mask_shape[batch_first_ ? 1 : 0] = 1;  // the time dim: one draw for all steps
  return x * Variable(inverted_dropout_mask(mask_shape, p_, x.data()));
}

}  // namespace ts::nn
