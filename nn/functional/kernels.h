// The kernels behind nn/functional.h, one implementation per device: the
// frontends validate, allocate and record the backward; a LayerKernels
// computes. Tensors handed in are dense and of the compute dtype (f32 or f64
// on the CPU; f16, bf16, f32 or f64 on CUDA): row-major, or channels-last
// when the layer's input was (the geometry's channels_last says so for
// pooling, whose every 4-D/5-D operand then is; a convolution's operands are
// in the layouts its geometry gives, which conv_layouts chose; batch norm
// takes x, y and their gradients in x's layout). Per-channel statistics and
// batch-norm parameters are f32, or f64 when the data is f64. A failed device
// call (cuDNN, a kernel launch, out of memory) throws ts::Error.
#pragma once

#include "base/error.h"
#include "nn/functional/geometry.h"
#include "tensor/device.h"
#include "tensor/tensor.h"

namespace ts::nn::functional {

// The layouts a convolution computes in: of its activations and its weight.
struct ConvLayouts {
  MemoryFormat activations = MemoryFormat::kContiguous;
  MemoryFormat weight = MemoryFormat::kContiguous;
};

class LayerKernels {
 public:
  virtual ~LayerKernels() = default;

  // A 2-D or 3-D convolution (geometry.h): out [n, c_out, (out_d,) out_h,
  // out_w]; bias [c_out] or undefined.
  virtual void conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const Tensor& out) const = 0;
  // The layouts a convolution of `dtype` computes in on this device for an
  // input in `input`'s layout: its activations (x, the output, their
  // gradients) and its weight. The frontend hands the kernels their operands
  // so and returns the results in the input's layout. oneDNN and cuDNN
  // compute channels-last, cuDNN with an NHWC filter, oneDNN reordering
  // whatever weight it is given; the CPU's reference loops and cuDNN's f64
  // kernels are row-major only.
  virtual ConvLayouts conv_layouts(MemoryFormat input, DType dtype) const = 0;
  // Writes grad_x and grad_weight, each only when defined.
  virtual void conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& grad_out,
                             const Tensor& grad_x, const Tensor& grad_weight) const = 0;

  // Normalizes x [n, c, h, w] with its batch statistics, saving the batch
  // mean and 1 / sqrt(var + eps) per channel, and moves the running
  // statistics towards the batch's (momentum; unbiased variance). weight and
  // bias may be undefined (identity affine). Returns what else the backward
  // needs: cuDNN's reserve space on CUDA, the unrounded means on the CPU.
  virtual Tensor batch_norm_forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                             const Tensor& running_mean, const Tensor& running_var, double momentum,
                                             double eps, const Tensor& y, const Tensor& save_mean,
                                             const Tensor& save_invstd) const = 0;
  // The gradients through the batch statistics: grad_x always, grad_weight
  // and grad_bias ([c]) always written too (cheap, and cuDNN computes them).
  // `reserve`: what the forward returned.
  virtual void batch_norm_backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                            const Tensor& save_mean, const Tensor& save_invstd, const Tensor& reserve,
                                            double eps, const Tensor& grad_x, const Tensor& grad_weight,
                                            const Tensor& grad_bias) const = 0;

  // relu(batch_norm(x) + z) in one kernel, z (x's shape, dtype and layout)
  // undefined for relu(batch_norm(x)): ResNet's block tails, without the
  // passes of a separate add and ReLU forward and backward. Only where
  // fuses_batch_norm_relu(x) says so (cuDNN's persistent NHWC kernels, for
  // channels-last f16); elsewhere the frontend composes the ops, and the
  // fused calls throw.
  virtual bool fuses_batch_norm_relu(const Tensor& /*x*/) const { return false; }
  virtual Tensor batch_norm_relu_forward_training(const Tensor& x, const Tensor& z, const Tensor& weight,
                                                  const Tensor& bias, const Tensor& running_mean,
                                                  const Tensor& running_var, double momentum, double eps,
                                                  const Tensor& y, const Tensor& save_mean,
                                                  const Tensor& save_invstd) const {
    throw_error(absl::StatusCode::kUnimplemented, "batch_norm_relu: no fused kernel for ", x.describe());
  }
  // The gradients through the ReLU, the add and the batch statistics, from
  // the forward's output y: grad_x, grad_weight and grad_bias, and grad_z
  // when z was given.
  virtual void batch_norm_relu_backward_training(const Tensor& x, const Tensor& y, const Tensor& grad_y,
                                                 const Tensor& weight, const Tensor& bias, const Tensor& save_mean,
                                                 const Tensor& save_invstd, const Tensor& reserve, double eps,
                                                 const Tensor& grad_x, const Tensor& grad_z, const Tensor& grad_weight,
                                                 const Tensor& grad_bias) const {
    throw_error(absl::StatusCode::kUnimplemented, "batch_norm_relu: no fused kernel for ", x.describe());
  }

  // Max pooling saves the argmax of each window (i32, flat index into the
  // [h, w] plane) for the backward. Backward kernels overwrite grad_x.
  virtual void max_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out,
                                  const Tensor& indices) const = 0;
  virtual void max_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& indices,
                                   const Tensor& grad_x) const = 0;
  // Average and adaptive average pooling (g.adaptive).
  virtual void avg_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out) const = 0;
  virtual void avg_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& grad_x) const = 0;
};

const LayerKernels& cpu_kernels();
const LayerKernels& cuda_kernels();
inline const LayerKernels& kernels_for(Device device) { return device.is_cuda() ? cuda_kernels() : cpu_kernels(); }

}  // namespace ts::nn::functional
