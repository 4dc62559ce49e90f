// The differentiable layer ops behind nn's modules, on CPU and CUDA:
// convolution, batch normalization and pooling. Each validates its inputs,
// throwing a ts::Error that names the op and the shapes, and records its
// backward.
#pragma once

#include <array>
#include <climits>
#include <cstdint>

#include "autograd/variable.h"

namespace ts::nn::functional {

// The options of a convolution over N spatial dims, in the order of those
// dims (depth,) height, width.
template <int N>
struct ConvOptions {
  std::array<int64_t, N> stride = filled(1);
  std::array<int64_t, N> padding = filled(0);
  std::array<int64_t, N> dilation = filled(1);
  int64_t groups = 1;

  static constexpr std::array<int64_t, N> filled(int64_t v) {
    std::array<int64_t, N> a;
    a.fill(v);
    return a;
  }
};
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

// x [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or
// undefined. CPU: oneDNN for f32 (primitives cached per shape), the im2col +
// OpenBLAS reference for f64; CUDA: cuDNN with the algorithm chosen once per
// shape and cached.
autograd::Variable conv2d(const autograd::Variable& x, const autograd::Variable& weight, const autograd::Variable& bias,
                          const Conv2dOptions& options = {});
// The same over volumes: x [N, C_in, D, H, W], weight [C_out, C_in / groups,
// kD, kH, kW].
autograd::Variable conv3d(const autograd::Variable& x, const autograd::Variable& weight, const autograd::Variable& bias,
                          const Conv3dOptions& options = {});

// Rows of weight [num_embeddings, dim] at the indices `ids` (i32 or i64, any
// shape, on weight's device): [ids..., dim]. The weight's gradient is dense;
// the row of `padding_idx` (if >= 0, or counted from the end if negative)
// gets none, as torch.nn.functional.embedding. An index out of range is an
// error naming it.
inline constexpr int64_t kNoPadding = INT64_MIN;
autograd::Variable embedding(const Tensor& ids, const autograd::Variable& weight, int64_t padding_idx = kNoPadding);

// Training: normalizes with the batch statistics over (N, H, W) and updates
// running_mean/running_var in place (running_var with the unbiased variance,
// as PyTorch). Eval: normalizes with the running statistics. weight/bias [C]
// may be undefined (no affine).
autograd::Variable batch_norm(const autograd::Variable& x, const Tensor& running_mean, const Tensor& running_var,
                              const autograd::Variable& weight, const autograd::Variable& bias, bool training,
                              double momentum = 0.1, double eps = 1e-5);

// relu(batch_norm(x) + z), or relu(batch_norm(x)) when z is undefined: the
// tail of a ResNet block. z must have x's shape. Where the device fuses them
// (cuDNN, channels-last f16, training) one kernel computes all three and
// their backward; elsewhere the ops run one after the other, with the same
// results as writing them out.
autograd::Variable batch_norm_relu(const autograd::Variable& x, const autograd::Variable& z, const Tensor& running_mean,
                                   const Tensor& running_var, const autograd::Variable& weight,
                                   const autograd::Variable& bias, bool training, double momentum = 0.1,
                                   double eps = 1e-5);

struct Pool2dOptions {
  std::array<int64_t, 2> kernel = {2, 2};
  std::array<int64_t, 2> stride = {0, 0};  // {0, 0}: the kernel's, as PyTorch's stride=None
  std::array<int64_t, 2> padding = {0, 0};
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg_pool2d only
};

autograd::Variable max_pool2d(const autograd::Variable& x, const Pool2dOptions& options);
autograd::Variable avg_pool2d(const autograd::Variable& x, const Pool2dOptions& options);
// Output [N, C, out_h, out_w] with PyTorch's start/end index rule.
autograd::Variable adaptive_avg_pool2d(const autograd::Variable& x, std::array<int64_t, 2> output_size);

}  // namespace ts::nn::functional
