// What the op frontends share beyond tensor/checks.h: the per-channel check
// of batch norm's vectors, and the dtypes kernels compute in.
#pragma once

#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace ts::nn::functional {

// The dtype a kernel runs in for data of `t`'s dtype and device: f16/bf16
// compute in f32 on the CPU (no half kernels there), else the dtype itself.
DType compute_dtype(const Tensor& t);
// Batch-norm statistics and parameters: f64 for f64 data, else f32.
inline DType param_dtype(DType compute) { return compute == DType::kF64 ? DType::kF64 : DType::kF32; }

// `t` converted to `dtype` and made dense in `format` (itself when it
// already is).
Tensor as_dense(const Tensor& t, DType dtype, MemoryFormat format = MemoryFormat::kContiguous);

// Requires `t` as a per-channel vector for x: floating-point, [C] for
// x [N, C, ...], on x's device. The error names `what` and both shapes.
void check_channel_vector(absl::string_view op, absl::string_view what, const Tensor& t, const Tensor& x);

}  // namespace ts::nn::functional
