// Test support for the layer ops: runs an op forward and backward on a
// device and compares the CUDA results with the CPU ones.
#pragma once

#include <functional>
#include <vector>

#include "autograd/variable.h"
#include "tensor/tensor.h"

namespace ts::nn::testing {

using LayerFn = std::function<autograd::Variable(const std::vector<autograd::Variable>&)>;

// Moves `inputs` to `device` as leaves requiring gradients (undefined ones
// stay undefined), the first (the activations) laid out in `format`, runs
// fn, backpropagates `grad_out` (in `format` too) and returns the output
// followed by each input's gradient, all on the CPU in their own layouts.
std::vector<Tensor> forward_backward(const LayerFn& fn, const std::vector<Tensor>& inputs, const Tensor& grad_out,
                                     Device device, MemoryFormat format = MemoryFormat::kContiguous);

// Expects fn on `device` with inputs converted to `dtype` to match fn on the
// CPU in f64 (row-major) on the same values, output and gradients, within
// `tol` relative to each result's largest magnitude. `grad_out` gives the
// output's shape and values (rounded to `dtype` for both runs).
// With a channels-last `format`, the first input is channels-last on
// `device`, and its gradient and the output must come back so.
void expect_matches_f64(const LayerFn& fn, const std::vector<Tensor>& inputs, const Tensor& grad_out, DType dtype,
                        Device device, double tol, MemoryFormat format = MemoryFormat::kContiguous);

// expect_matches_f64 on CUDA device 0.
void expect_cuda_matches_cpu(const LayerFn& fn, const std::vector<Tensor>& inputs, const Tensor& grad_out, DType dtype,
                             double tol, MemoryFormat format = MemoryFormat::kContiguous);

}  // namespace ts::nn::testing
