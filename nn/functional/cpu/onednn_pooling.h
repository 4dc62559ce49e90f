// f32 average pooling on the CPU through oneDNN. Tensors as kernels.h hands
// them in: contiguous [planes, h, w] input and [planes, out_h, out_w] output.
// A oneDNN failure throws ts::Error naming the direction and the geometry.
//
// Max pooling stays on the reference kernel: oneDNN's max skips NaN where
// PyTorch's propagates it, and its workspace (the argmax) is in an
// implementation-defined format, not the flat i32 indices that kernels.h
// promises.
#pragma once

#include "nn/functional/geometry.h"
#include "tensor/tensor.h"

namespace ts::nn::functional {

// Whether oneDNN computes exactly PyTorch's average for `g`: adaptive pooling
// only with uniform windows, and count_include_pad only when no window
// reaches past the far padding (oneDNN would divide by the whole kernel where
// PyTorch cuts the window at the padding's edge).
bool onednn_avg_pool2d_supports(const Pool2dGeometry& g);

void onednn_avg_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out);
// Overwrites grad_x.
void onednn_avg_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& grad_x);

}  // namespace ts::nn::functional
