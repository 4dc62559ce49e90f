#include "nn/dropout.h"

#include "autograd/ops.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::nn {

Dropout::Dropout(double p) : Module("Dropout"), p_(p) {
  TS_CHECK(p >= 0 && p <= 1, "Dropout(p=", p, "): p must be in [0, 1]");
}

Variable Dropout::forward(const Variable& x) {
  if (!is_training() || p_ == 0) return x;
  TS_CHECK(is_floating(x.dtype()), "Dropout: needs a floating-point input, got ", x.data().describe());
  // The mask holds 0 or 1/(1-p), so forward and backward are one multiply.
  const Tensor mask = bernoulli(x.shape(), 1 - p_, {x.dtype(), x.device()}) * (p_ < 1 ? 1 / (1 - p_) : 0.0);
  return x * Variable(mask);
}

}  // namespace ts::nn
