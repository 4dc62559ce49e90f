// batch_norm: training mode runs the device's fused kernels (statistics,
// normalization and the running-stat update in one place); eval mode is an
// affine map per channel, built from tensor ops on any device.
#include <utility>
#include <vector>

#include "autograd/function.h"
#include "base/error.h"
#include "nn/functional.h"
#include "nn/functional/common.h"
#include "nn/functional/kernels.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts::nn::functional {
namespace {

void check_inputs(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  check_floating("batch_norm", x);
  TS_CHECK(x.dim() >= 2, "batch_norm: input must be [N, C, ...] (2-D or more), got ", x.describe());
  TS_CHECK(training || (running_mean.defined() && running_var.defined()),
           "batch_norm: eval mode needs running_mean and running_var (input ", x.describe(), ")");
  TS_CHECK(running_mean.defined() == running_var.defined(),
           "batch_norm: running_mean and running_var must both be given or both be undefined");
  if (running_mean.defined()) {
    check_channel_vector("batch_norm", "running_mean", running_mean, x);
    check_channel_vector("batch_norm", "running_var", running_var, x);
  }
  if (weight.defined()) check_channel_vector("batch_norm", "weight", weight, x);
  if (bias.defined()) check_channel_vector("batch_norm", "bias", bias, x);
  TS_CHECK(eps > 0 && momentum >= 0 && momentum <= 1, "batch_norm: eps ", eps, " must be positive and momentum ",
           momentum, " in [0, 1]");
  TS_CHECK(!training || x.numel() / x.size(1) >= 2,
           "batch_norm: training needs more than one value per channel, got input ", x.describe());
  TS_CHECK(x.numel() != 0, "batch_norm: empty input ", x.describe());
}

// What the training kernels compute in: compute_dtype's, but bf16 in f32 on
// CUDA too. Nothing documents bf16 for cuDNN's legacy batch norm, and
// PyTorch keeps bf16 away from it.
DType training_dtype(const Tensor& x) { return x.dtype() == DType::kBF16 ? DType::kF32 : compute_dtype(x); }

// The dims batch statistics reduce over (all but the channel dim), and the
// shape that broadcasts a [C] vector against x.
std::vector<int64_t> reduce_dims(const Tensor& x) {
  std::vector<int64_t> dims = {0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}
Shape channel_shape(const Tensor& x) {
  Shape shape(x.dim(), 1);
  shape[1] = x.size(1);
  return shape;
}

// A per-channel parameter in dtype pt: `t`, or `fill` when undefined.
Tensor param_or(const Tensor& t, double fill, int64_t channels, DType pt, Device device) {
  if (t.defined()) return as_dense(t, pt);
  return ts::full({channels}, Scalar(fill), {pt, device});
}

// Converts each defined gradient to its input's dtype.
std::vector<Tensor> in_input_dtypes(std::vector<Tensor> grads, const std::vector<DType>& dtypes) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) grads[i] = ts::to(grads[i], dtypes[i]);
  }
  return grads;
}

autograd::Variable batch_norm_training(const autograd::Variable& x, const Tensor& running_mean,
                                       const Tensor& running_var, const autograd::Variable& weight,
                                       const autograd::Variable& bias, double momentum, double eps) {
  const Tensor& xd = x.data();
  const DType ct = training_dtype(xd), pt = param_dtype(ct);
  const int64_t channels = xd.size(1);
  const MemoryFormat format = xd.suggest_memory_format();  // y and the gradients keep x's layout
  const Tensor xc = as_dense(xd, ct, format);
  const Tensor wc = weight.defined() ? as_dense(weight.data(), pt) : Tensor();
  const Tensor bc = bias.defined() ? as_dense(bias.data(), pt) : Tensor();
  // Without running statistics the kernel updates throwaway ones.
  const Tensor rm = param_or(running_mean, 0, channels, pt, xd.device());
  const Tensor rv = param_or(running_var, 1, channels, pt, xd.device());
  const Tensor y = Tensor::allocate(xd.shape(), ct, xd.device(), format);
  const Tensor save_mean = Tensor::allocate({channels}, pt, xd.device());
  const Tensor save_invstd = Tensor::allocate({channels}, pt, xd.device());
  const LayerKernels* kernels = &kernels_for(xd.device());
  const Tensor reserve =
      kernels->batch_norm_forward_training(xc, wc, bc, rm, rv, momentum, eps, y, save_mean, save_invstd);
  // The kernel updated converted copies when the buffers were not dense in pt.
  if (running_mean.defined() && !rm.shares_storage_with(running_mean)) ts::copy_(running_mean, rm);
  if (running_var.defined() && !rv.shares_storage_with(running_var)) ts::copy_(running_var, rv);
  const std::vector<DType> dtypes = {xd.dtype(), weight.defined() ? weight.dtype() : pt,
                                     bias.defined() ? bias.dtype() : pt};
  return autograd::record(
      "batch_norm", {x, weight, bias}, ts::to(y, xd.dtype()),
      [xc, wc, save_mean, save_invstd, reserve, eps, ct, pt, format, dtypes,
       kernels](const autograd::GradContext& ctx) {
        const Tensor gy = as_dense(ctx.grad(), ct, format);
        const int64_t channels = xc.size(1);
        const Tensor gx = Tensor::allocate(xc.shape(), ct, xc.device(), format);
        const Tensor gw = Tensor::allocate({channels}, pt, xc.device());
        const Tensor gb = Tensor::allocate({channels}, pt, xc.device());
        kernels->batch_norm_backward_training(xc, gy, wc, save_mean, save_invstd, reserve, eps, gx, gw, gb);
        return in_input_dtypes(
            {ctx.needs(0) ? gx : Tensor(), ctx.needs(1) ? gw : Tensor(), ctx.needs(2) ? gb : Tensor()}, dtypes);
      });
}

// y = (x - running_mean) * scale + bias per channel, with scale = weight /
// sqrt(running_var + eps). (Folding it into x * scale + shift saves a pass
// but cancels: for |mean| >> std the two terms lose the result's digits.)
autograd::Variable batch_norm_eval(const autograd::Variable& x, const Tensor& running_mean, const Tensor& running_var,
                                   const autograd::Variable& weight, const autograd::Variable& bias, double eps) {
  const Tensor& xd = x.data();
  const DType pt = param_dtype(compute_dtype(xd));
  const int64_t channels = xd.size(1);
  const Shape bshape = channel_shape(xd);
  const Tensor w = param_or(weight.defined() ? weight.data() : Tensor(), 1, channels, pt, xd.device());
  const Tensor b = param_or(bias.defined() ? bias.data() : Tensor(), 0, channels, pt, xd.device());
  const Tensor invstd = ts::rsqrt(as_dense(running_var, pt) + eps);
  const Tensor scale = ts::reshape(w * invstd, bshape);
  const Tensor mean_b = ts::reshape(as_dense(running_mean, pt), bshape);
  const Tensor y = (xd - mean_b) * scale + ts::reshape(b, bshape);
  const std::vector<DType> dtypes = {xd.dtype(), weight.defined() ? weight.dtype() : pt,
                                     bias.defined() ? bias.dtype() : pt};
  return autograd::record(
      "batch_norm", {x, weight, bias}, ts::to(y, xd.dtype()),
      [xd, mean_b, invstd, scale, dtypes](const autograd::GradContext& ctx) {
        const Tensor& gy = ctx.grad();
        const std::vector<int64_t> dims = reduce_dims(xd);
        // dw = sum(gy * (x - running_mean) * invstd) over all but C.
        return in_input_dtypes(
            {ctx.needs(0) ? gy * scale : Tensor(), ctx.needs(1) ? ts::sum((xd - mean_b) * gy, dims) * invstd : Tensor(),
             ctx.needs(2) ? ts::sum(gy, dims) : Tensor()},
            dtypes);
      });
}

}  // namespace

autograd::Variable batch_norm(const autograd::Variable& x, const Tensor& running_mean, const Tensor& running_var,
                              const autograd::Variable& weight, const autograd::Variable& bias, bool training,
                              double momentum, double eps) {
  TS_CHECK(x.defined(), "batch_norm: input is undefined");
  check_inputs(x.data(), running_mean, running_var, weight.defined() ? weight.data() : Tensor(),
               bias.defined() ? bias.data() : Tensor(), training, momentum, eps);
  if (training) return batch_norm_training(x, running_mean, running_var, weight, bias, momentum, eps);
  return batch_norm_eval(x, running_mean, running_var, weight, bias, eps);
}

}  // namespace ts::nn::functional
