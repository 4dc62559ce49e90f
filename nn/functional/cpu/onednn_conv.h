// f32 convolution, 2-D and 3-D, on the CPU through oneDNN, the CPU's
// counterpart of the cuDNN path. Tensors as kernels.h hands them in:
// contiguous NC(D)HW input and output, OI(D)HW weight, f32. A oneDNN failure throws ts::Error naming the
// direction and the shapes.
#pragma once

#include "nn/functional/geometry.h"
#include "tensor/tensor.h"

namespace ts::nn::functional {

// out [n, c_out, (out_d,) out_h, out_w]; bias [c_out] or undefined.
void onednn_conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                         const Tensor& out);
// Writes grad_x and grad_weight, each only when defined.
void onednn_conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& grad_out,
                          const Tensor& grad_x, const Tensor& grad_weight);

}  // namespace ts::nn::functional
