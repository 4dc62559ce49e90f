// The differentiable layer ops behind nn's modules, on CPU and CUDA:
// convolution, batch normalization and pooling. Each validates its inputs,
// throwing a ts::Error that names the op and the shapes, and records its
// backward.
#pragma once

#include <array>
#include <cstdint>

#include "autograd/variable.h"

namespace ts::nn::functional {

struct Conv2dOptions {
  std::array<int64_t, 2> stride = {1, 1};
  std::array<int64_t, 2> padding = {0, 0};
  std::array<int64_t, 2> dilation = {1, 1};
  int64_t groups = 1;
};

// x [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or
// undefined. CPU: im2col + OpenBLAS; CUDA: cuDNN with the algorithm chosen
// once per shape and cached.
autograd::Variable conv2d(const autograd::Variable& x, const autograd::Variable& weight, const autograd::Variable& bias,
                          const Conv2dOptions& options = {});

// Training: normalizes with the batch statistics over (N, H, W) and updates
// running_mean/running_var in place (running_var with the unbiased variance,
// as PyTorch). Eval: normalizes with the running statistics. weight/bias [C]
// may be undefined (no affine).
autograd::Variable batch_norm(const autograd::Variable& x, const Tensor& running_mean, const Tensor& running_var,
                              const autograd::Variable& weight, const autograd::Variable& bias, bool training,
                              double momentum = 0.1, double eps = 1e-5);

struct Pool2dOptions {
  std::array<int64_t, 2> kernel = {2, 2};
  std::array<int64_t, 2> stride = {2, 2};
  std::array<int64_t, 2> padding = {0, 0};
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg_pool2d only
};

autograd::Variable max_pool2d(const autograd::Variable& x, const Pool2dOptions& options);
autograd::Variable avg_pool2d(const autograd::Variable& x, const Pool2dOptions& options);
// Output [N, C, out_h, out_w] with PyTorch's start/end index rule.
autograd::Variable adaptive_avg_pool2d(const autograd::Variable& x, std::array<int64_t, 2> output_size);

}  // namespace ts::nn::functional
