// The CUDA LayerKernels: convolution and training-mode batch norm (alone or
// with a fused add and ReLU) through cuDNN (cuda/conv.cc, 2-D and 3-D;
// cuda/batch_norm.cc), pooling as hand-written kernels (pooling.cu).
#pragma once

#include "nn/functional/kernels.h"

namespace ts::nn::functional {

class CudaKernels final : public LayerKernels {
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
  bool fuses_batch_norm_relu(const Tensor& x) const override;
  Tensor batch_norm_relu_forward_training(const Tensor& x, const Tensor& z, const Tensor& weight, const Tensor& bias,
                                          const Tensor& running_mean, const Tensor& running_var, double momentum,
                                          double eps, const Tensor& y, const Tensor& save_mean,
                                          const Tensor& save_invstd) const override;
  void batch_norm_relu_backward_training(const Tensor& x, const Tensor& y, const Tensor& grad_y, const Tensor& weight,
                                         const Tensor& bias, const Tensor& save_mean, const Tensor& save_invstd,
                                         const Tensor& reserve, double eps, const Tensor& grad_x, const Tensor& grad_z,
                                         const Tensor& grad_weight, const Tensor& grad_bias) const override;
  void max_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out,
                          const Tensor& indices) const override;
  void max_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& indices,
                           const Tensor& grad_x) const override;
  void avg_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out) const override;
  void avg_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& grad_x) const override;
};

}  // namespace ts::nn::functional
