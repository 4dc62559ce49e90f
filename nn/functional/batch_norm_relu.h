// The fused path of batch_norm_relu (nn/functional.h): relu(batch_norm(x) +
// z) in training through one pair of kernels, the forward's output saved for
// the backward (the ReLU's needs it). batch_norm_relu takes it where the
// device's kernels fuse; tests run it on the CPU through kernels of their
// own, so that only the device's kernels are left to a GPU.
#pragma once

#include "autograd/variable.h"
#include "nn/functional/kernels.h"

namespace ts::nn::functional::batch_norm_internal {

autograd::Variable batch_norm_relu_fused(const LayerKernels& kernels, const autograd::Variable& x,
                                         const autograd::Variable& z, const Tensor& running_mean,
                                         const Tensor& running_var, const autograd::Variable& weight,
                                         const autograd::Variable& bias, double momentum, double eps);

}  // namespace ts::nn::functional::batch_norm_internal
