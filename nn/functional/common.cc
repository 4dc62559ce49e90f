#include "nn/functional/common.h"

#include "base/error.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts::nn::functional {

DType compute_dtype(const Tensor& t) {
  return t.device().is_cpu() && is_reduced_float(t.dtype()) ? DType::kF32 : t.dtype();
}

Tensor as_dense(const Tensor& t, DType dtype, MemoryFormat format) { return ts::contiguous(ts::to(t, dtype), format); }

void check_channel_vector(absl::string_view op, absl::string_view what, const Tensor& t, const Tensor& x) {
  check_floating(op, t);
  TS_CHECK(t.dim() == 1 && t.size(0) == x.size(1), op, ": ", what, " ", t.describe(), " must be [", x.size(1),
           "] for input ", x.describe());
  check_same_device(op, {&x, &t});
}

}  // namespace ts::nn::functional
