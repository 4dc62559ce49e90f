// What the op frontends share: input checks whose errors name the op and the
// tensors, and the dtypes kernels compute in.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace ts::nn::functional {

// The dtype a kernel runs in for data of `t`'s dtype and device: f16/bf16
// compute in f32 on the CPU (no half kernels there), else the dtype itself.
DType compute_dtype(const Tensor& t);
// Batch-norm statistics and parameters: f64 for f64 data, else f32.
inline DType param_dtype(DType compute) { return compute == DType::kF64 ? DType::kF64 : DType::kF32; }

// `t` converted to `dtype` and made contiguous (itself when it already is).
absl::StatusOr<Tensor> as_dense(const Tensor& t, DType dtype);

// Requires a defined floating-point tensor: "<op>: <what> must be ...".
absl::Status check_floating(absl::string_view op, absl::string_view what, const Tensor& t);
// Requires `t` ([C], on x's device) as a per-channel vector for x.
absl::Status check_channel_vector(absl::string_view op, absl::string_view what, const Tensor& t,
                                  const Tensor& x);
// Requires `t` on x's device.
absl::Status check_same_device(absl::string_view op, absl::string_view what, const Tensor& t,
                               const Tensor& x);

}  // namespace ts::nn::functional
