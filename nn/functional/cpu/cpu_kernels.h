// The CPU LayerKernels: 2-D and 3-D convolution through oneDNN for f32 and as im2col +
// OpenBLAS GEMM (the reference) for f64, batch norm and pooling as loops
// threaded over channels or planes. f32 and f64.
#pragma once

#include "absl/strings/string_view.h"
#include "base/error.h"
#include "nn/functional/kernels.h"

namespace ts::nn::functional {

// Calls fn(float{}) or fn(double{}) for `dtype`; any other dtype is a bug
// (the frontends should have converted it away): kInternal.
template <typename Fn>
void dispatch_f32_f64(absl::string_view op, DType dtype, Fn fn) {
  switch (dtype) {
    case DType::kF32:
      fn(float{});
      return;
    case DType::kF64:
      fn(double{});
      return;
    default:
      throw_error(absl::StatusCode::kInternal, op, ": no CPU kernel for ", dtype_name(dtype));
  }
}

class CpuKernels final : public LayerKernels {
 public:
  void conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Tensor& out) const override;
  ConvLayouts conv_layouts(MemoryFormat input, DType dtype) const override;
  void conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& grad_out,
                     const Tensor& grad_x, const Tensor& grad_weight) const override;
  Tensor batch_norm_forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                     const Tensor& running_mean, const Tensor& running_var, double momentum, double eps,
                                     const Tensor& y, const Tensor& save_mean,
                                     const Tensor& save_invstd) const override;
  void batch_norm_backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                    const Tensor& save_mean, const Tensor& save_invstd, const Tensor& reserve,
                                    double eps, const Tensor& grad_x, const Tensor& grad_weight,
                                    const Tensor& grad_bias) const override;
  void max_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out,
                          const Tensor& indices) const override;
  void max_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& indices,
                           const Tensor& grad_x) const override;
  void avg_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out) const override;
  void avg_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& grad_x) const override;
};

}  // namespace ts::nn::functional
