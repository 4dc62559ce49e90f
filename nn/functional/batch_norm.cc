// batch_norm: training mode runs the device's fused kernels (statistics,
// normalization and the running-stat update in one place); eval mode is an
// affine map per channel, built from tensor ops on any device.
#include <utility>
#include <vector>

#include "autograd/function.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "nn/functional.h"
#include "nn/functional/batch_norm_relu.h"
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
  // Before the division below: with no channels (C = 0) it would divide by 0.
  TS_CHECK(x.numel() != 0, "batch_norm: empty input ", x.describe());
  TS_CHECK(!training || x.numel() / x.size(1) >= 2,
           "batch_norm: training needs more than one value per channel, got input ", x.describe());
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

// A training-mode batch norm's operands as the kernels take them (dense, in
// the compute dtype; x in its own layout, which y and the gradients keep),
// the running statistics they update, and its fresh outputs.
struct TrainingPass {
  DType ct, pt;
  MemoryFormat format;
  Tensor x, weight, bias, running_mean, running_var, y, save_mean, save_invstd;
};

TrainingPass prepare_training(const autograd::Variable& x, const Tensor& running_mean, const Tensor& running_var,
                              const autograd::Variable& weight, const autograd::Variable& bias) {
  const Tensor& xd = x.data();
  TrainingPass p;
  p.ct = training_dtype(xd);
  p.pt = param_dtype(p.ct);
  p.format = xd.suggest_memory_format();
  const int64_t channels = xd.size(1);
  p.x = as_dense(xd, p.ct, p.format);
  p.weight = weight.defined() ? as_dense(weight.data(), p.pt) : Tensor();
  p.bias = bias.defined() ? as_dense(bias.data(), p.pt) : Tensor();
  // Without running statistics the kernel updates throwaway ones.
  p.running_mean = param_or(running_mean, 0, channels, p.pt, xd.device());
  p.running_var = param_or(running_var, 1, channels, p.pt, xd.device());
  p.y = Tensor::allocate(xd.shape(), p.ct, xd.device(), p.format);
  p.save_mean = Tensor::allocate({channels}, p.pt, xd.device());
  p.save_invstd = Tensor::allocate({channels}, p.pt, xd.device());
  return p;
}

// After the kernel: it updated converted copies when the buffers were not
// dense in the parameter dtype.
void write_back_running_stats(const TrainingPass& p, const Tensor& running_mean, const Tensor& running_var) {
  if (running_mean.defined() && !p.running_mean.shares_storage_with(running_mean)) {
    ts::copy_(running_mean, p.running_mean);
  }
  if (running_var.defined() && !p.running_var.shares_storage_with(running_var)) ts::copy_(running_var, p.running_var);
}

// The dtypes the gradients of x, weight and bias are returned in.
std::vector<DType> input_dtypes(const autograd::Variable& x, const autograd::Variable& weight,
                                const autograd::Variable& bias, DType pt) {
  return {x.dtype(), weight.defined() ? weight.dtype() : pt, bias.defined() ? bias.dtype() : pt};
}

// Fresh gradient buffers for a training backward: x's shape and layout in
// the compute dtype, and [C] vectors in the parameter dtype.
struct TrainingGrads {
  Tensor x, weight, bias;
};

TrainingGrads allocate_grads(const Tensor& xc, DType pt, MemoryFormat format) {
  const int64_t channels = xc.size(1);
  return {Tensor::allocate(xc.shape(), xc.dtype(), xc.device(), format), Tensor::allocate({channels}, pt, xc.device()),
          Tensor::allocate({channels}, pt, xc.device())};
}

autograd::Variable batch_norm_training(const autograd::Variable& x, const Tensor& running_mean,
                                       const Tensor& running_var, const autograd::Variable& weight,
                                       const autograd::Variable& bias, double momentum, double eps) {
  const TrainingPass p = prepare_training(x, running_mean, running_var, weight, bias);
  const LayerKernels* kernels = &kernels_for(x.device());
  const Tensor reserve = kernels->batch_norm_forward_training(p.x, p.weight, p.bias, p.running_mean, p.running_var,
                                                              momentum, eps, p.y, p.save_mean, p.save_invstd);
  write_back_running_stats(p, running_mean, running_var);
  auto backward = [xc = p.x, wc = p.weight, save_mean = p.save_mean, save_invstd = p.save_invstd, reserve, eps,
                   ct = p.ct, pt = p.pt, format = p.format, dtypes = input_dtypes(x, weight, bias, p.pt),
                   kernels](const autograd::GradContext& ctx) {
    const Tensor gy = as_dense(ctx.grad(), ct, format);
    const TrainingGrads g = allocate_grads(xc, pt, format);
    kernels->batch_norm_backward_training(xc, gy, wc, save_mean, save_invstd, reserve, eps, g.x, g.weight, g.bias);
    return in_input_dtypes(
        {ctx.needs(0) ? g.x : Tensor(), ctx.needs(1) ? g.weight : Tensor(), ctx.needs(2) ? g.bias : Tensor()}, dtypes);
  };
  return autograd::record("batch_norm", {x, weight, bias}, ts::to(p.y, x.dtype()), std::move(backward));
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

namespace batch_norm_internal {

autograd::Variable batch_norm_relu_fused(const LayerKernels& kernels, const autograd::Variable& x,
                                         const autograd::Variable& z, const Tensor& running_mean,
                                         const Tensor& running_var, const autograd::Variable& weight,
                                         const autograd::Variable& bias, double momentum, double eps) {
  const TrainingPass p = prepare_training(x, running_mean, running_var, weight, bias);
  const Tensor zc = z.defined() ? as_dense(z.data(), p.ct, p.format) : Tensor();
  const LayerKernels* k = &kernels;
  const Tensor reserve = k->batch_norm_relu_forward_training(p.x, zc, p.weight, p.bias, p.running_mean, p.running_var,
                                                             momentum, eps, p.y, p.save_mean, p.save_invstd);
  write_back_running_stats(p, running_mean, running_var);
  std::vector<DType> dtypes = input_dtypes(x, weight, bias, p.pt);
  dtypes.insert(dtypes.begin() + 1, z.defined() ? z.dtype() : p.ct);
  auto backward = [xc = p.x, y = p.y, wc = p.weight, bc = p.bias, save_mean = p.save_mean, save_invstd = p.save_invstd,
                   reserve, eps, ct = p.ct, pt = p.pt, format = p.format, has_z = z.defined(), dtypes,
                   k](const autograd::GradContext& ctx) {
    const Tensor gy = as_dense(ctx.grad(), ct, format);
    const TrainingGrads g = allocate_grads(xc, pt, format);
    const Tensor gz = has_z ? Tensor::allocate(xc.shape(), ct, xc.device(), format) : Tensor();
    k->batch_norm_relu_backward_training(xc, y, gy, wc, bc, save_mean, save_invstd, reserve, eps, g.x, gz, g.weight,
                                         g.bias);
    return in_input_dtypes({ctx.needs(0) ? g.x : Tensor(), ctx.needs(1) ? gz : Tensor(),
                            ctx.needs(2) ? g.weight : Tensor(), ctx.needs(3) ? g.bias : Tensor()},
                           dtypes);
  };
  return autograd::record("batch_norm_relu", {x, z, weight, bias}, ts::to(p.y, x.dtype()), std::move(backward));
}

}  // namespace batch_norm_internal

autograd::Variable batch_norm_relu(const autograd::Variable& x, const autograd::Variable& z, const Tensor& running_mean,
                                   const Tensor& running_var, const autograd::Variable& weight,
                                   const autograd::Variable& bias, bool training, double momentum, double eps) {
  TS_CHECK(x.defined(), "batch_norm_relu: input is undefined");
  if (z.defined()) {
    TS_CHECK(z.data().shape() == x.data().shape() && z.device() == x.device(), "batch_norm_relu: z ",
             z.data().describe(), " must have the shape and device of the input ", x.data().describe());
  }
  const LayerKernels& kernels = kernels_for(x.device());
  if (training && kernels.fuses_batch_norm_relu(x.data()) && (!z.defined() || z.dtype() == x.dtype())) {
    check_inputs(x.data(), running_mean, running_var, weight.defined() ? weight.data() : Tensor(),
                 bias.defined() ? bias.data() : Tensor(), training, momentum, eps);
    return batch_norm_internal::batch_norm_relu_fused(kernels, x, z, running_mean, running_var, weight, bias, momentum,
                                                      eps);
  }
  const autograd::Variable normalized = batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps);
  return autograd::relu(z.defined() ? normalized + z : normalized);
}

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
