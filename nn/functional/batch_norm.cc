// batch_norm: training mode runs the device's fused kernels (statistics,
// normalization and the running-stat update in one place); eval mode is an
// affine map per channel, built from tensor ops on any device.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/function.h"
#include "nn/functional.h"
#include "nn/functional/common.h"
#include "nn/functional/kernels.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::nn::functional {
namespace {

using Grads = absl::StatusOr<std::vector<Tensor>>;

absl::Status check_inputs(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                          const Tensor& weight, const Tensor& bias, bool training, double momentum,
                          double eps) {
  RETURN_IF_ERROR(check_floating("batch_norm", "input", x));
  if (x.dim() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_norm: input must be [N, C, ...] (2-D or more), got ", x.describe()));
  }
  if (!training && (!running_mean.defined() || !running_var.defined())) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_norm: eval mode needs running_mean and running_var (input ", x.describe(), ")"));
  }
  if (running_mean.defined() != running_var.defined()) {
    return absl::InvalidArgumentError(
        "batch_norm: running_mean and running_var must both be given or both be undefined");
  }
  if (running_mean.defined()) {
    RETURN_IF_ERROR(check_channel_vector("batch_norm", "running_mean", running_mean, x));
    RETURN_IF_ERROR(check_channel_vector("batch_norm", "running_var", running_var, x));
  }
  if (weight.defined()) RETURN_IF_ERROR(check_channel_vector("batch_norm", "weight", weight, x));
  if (bias.defined()) RETURN_IF_ERROR(check_channel_vector("batch_norm", "bias", bias, x));
  if (!(eps > 0) || !(momentum >= 0 && momentum <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_norm: eps ", eps, " must be positive and momentum ", momentum, " in [0, 1]"));
  }
  if (training && x.numel() / x.size(1) < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_norm: training needs more than one value per channel, got input ", x.describe()));
  }
  if (x.numel() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("batch_norm: empty input ", x.describe()));
  }
  return absl::OkStatus();
}

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
absl::StatusOr<Tensor> param_or(const Tensor& t, double fill, int64_t channels, DType pt, Device device) {
  if (t.defined()) return as_dense(t, pt);
  return ts::full({channels}, Scalar(fill), {pt, device});
}

// Converts each defined gradient to its input's dtype.
Grads in_input_dtypes(std::vector<Tensor> grads, const std::vector<DType>& dtypes) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) {
      ASSIGN_OR_RETURN(grads[i], ts::to(grads[i], dtypes[i]));
    }
  }
  return grads;
}

absl::StatusOr<autograd::Variable> batch_norm_training(const autograd::Variable& x,
                                                       const Tensor& running_mean, const Tensor& running_var,
                                                       const autograd::Variable& weight,
                                                       const autograd::Variable& bias, double momentum,
                                                       double eps) {
  const Tensor& xd = x.data();
  const DType ct = compute_dtype(xd), pt = param_dtype(ct);
  const int64_t channels = xd.size(1);
  ASSIGN_OR_RETURN(Tensor xc, as_dense(xd, ct));
  Tensor wc, bc;
  if (weight.defined()) {
    ASSIGN_OR_RETURN(wc, as_dense(weight.data(), pt));
  }
  if (bias.defined()) {
    ASSIGN_OR_RETURN(bc, as_dense(bias.data(), pt));
  }
  // Without running statistics the kernel updates throwaway ones.
  ASSIGN_OR_RETURN(Tensor rm, param_or(running_mean, 0, channels, pt, xd.device()));
  ASSIGN_OR_RETURN(Tensor rv, param_or(running_var, 1, channels, pt, xd.device()));
  ASSIGN_OR_RETURN(Tensor y, Tensor::allocate(xd.shape(), ct, xd.device()));
  ASSIGN_OR_RETURN(Tensor save_mean, Tensor::allocate({channels}, pt, xd.device()));
  ASSIGN_OR_RETURN(Tensor save_invstd, Tensor::allocate({channels}, pt, xd.device()));
  const LayerKernels* kernels = &kernels_for(xd.device());
  RETURN_IF_ERROR(
      kernels->batch_norm_forward_training(xc, wc, bc, rm, rv, momentum, eps, y, save_mean, save_invstd));
  // The kernel updated converted copies when the buffers were not dense in pt.
  if (running_mean.defined() && !rm.shares_storage_with(running_mean)) {
    RETURN_IF_ERROR(ts::copy_(running_mean, rm));
  }
  if (running_var.defined() && !rv.shares_storage_with(running_var)) {
    RETURN_IF_ERROR(ts::copy_(running_var, rv));
  }
  ASSIGN_OR_RETURN(y, ts::to(y, xd.dtype()));
  const std::vector<DType> dtypes = {xd.dtype(), weight.defined() ? weight.dtype() : pt,
                                     bias.defined() ? bias.dtype() : pt};
  return autograd::record(
      "batch_norm", {x, weight, bias}, std::move(y),
      [xc, wc, save_mean, save_invstd, eps, ct, pt, dtypes,
       kernels](const autograd::GradContext& ctx) -> Grads {
        ASSIGN_OR_RETURN(Tensor gy, as_dense(ctx.grad(), ct));
        const int64_t channels = xc.size(1);
        ASSIGN_OR_RETURN(Tensor gx, Tensor::allocate(xc.shape(), ct, xc.device()));
        ASSIGN_OR_RETURN(Tensor gw, Tensor::allocate({channels}, pt, xc.device()));
        ASSIGN_OR_RETURN(Tensor gb, Tensor::allocate({channels}, pt, xc.device()));
        RETURN_IF_ERROR(
            kernels->batch_norm_backward_training(xc, gy, wc, save_mean, save_invstd, eps, gx, gw, gb));
        return in_input_dtypes(
            {ctx.needs(0) ? gx : Tensor(), ctx.needs(1) ? gw : Tensor(), ctx.needs(2) ? gb : Tensor()},
            dtypes);
      });
}

// y = (x - running_mean) * scale + bias per channel, with scale = weight /
// sqrt(running_var + eps). (Folding it into x * scale + shift saves a pass
// but cancels: for |mean| >> std the two terms lose the result's digits.)
absl::StatusOr<autograd::Variable> batch_norm_eval(const autograd::Variable& x, const Tensor& running_mean,
                                                   const Tensor& running_var,
                                                   const autograd::Variable& weight,
                                                   const autograd::Variable& bias, double eps) {
  const Tensor& xd = x.data();
  const DType pt = param_dtype(compute_dtype(xd));
  const int64_t channels = xd.size(1);
  const Shape bshape = channel_shape(xd);
  ASSIGN_OR_RETURN(Tensor rm, as_dense(running_mean, pt));
  ASSIGN_OR_RETURN(Tensor rv, as_dense(running_var, pt));
  ASSIGN_OR_RETURN(Tensor w,
                   param_or(weight.defined() ? weight.data() : Tensor(), 1, channels, pt, xd.device()));
  ASSIGN_OR_RETURN(Tensor b, param_or(bias.defined() ? bias.data() : Tensor(), 0, channels, pt, xd.device()));
  ASSIGN_OR_RETURN(Tensor invstd, ts::add(rv, Scalar(eps)));
  ASSIGN_OR_RETURN(invstd, ts::rsqrt(invstd));
  ASSIGN_OR_RETURN(Tensor scale, ts::mul(w, invstd));
  ASSIGN_OR_RETURN(scale, ts::reshape(scale, bshape));
  ASSIGN_OR_RETURN(Tensor mean_b, ts::reshape(rm, bshape));
  ASSIGN_OR_RETURN(Tensor bias_b, ts::reshape(b, bshape));
  ASSIGN_OR_RETURN(Tensor y, ts::sub(xd, mean_b));
  ASSIGN_OR_RETURN(y, ts::mul(y, scale));
  ASSIGN_OR_RETURN(y, ts::add(y, bias_b));
  ASSIGN_OR_RETURN(y, ts::to(y, xd.dtype()));
  const std::vector<DType> dtypes = {xd.dtype(), weight.defined() ? weight.dtype() : pt,
                                     bias.defined() ? bias.dtype() : pt};
  return autograd::record("batch_norm", {x, weight, bias}, std::move(y),
                          [xd, mean_b, invstd, scale, dtypes](const autograd::GradContext& ctx) -> Grads {
                            const Tensor& gy = ctx.grad();
                            const std::vector<int64_t> dims = reduce_dims(xd);
                            Tensor gx, gw, gb;
                            if (ctx.needs(0)) {
                              ASSIGN_OR_RETURN(gx, ts::mul(gy, scale));
                            }
                            if (ctx.needs(1)) {
                              // dw = sum(gy * (x - running_mean) * invstd) over all but C.
                              ASSIGN_OR_RETURN(Tensor xhat, ts::sub(xd, mean_b));
                              ASSIGN_OR_RETURN(xhat, ts::mul(xhat, gy));
                              ASSIGN_OR_RETURN(gw, ts::sum(xhat, dims));
                              ASSIGN_OR_RETURN(gw, ts::mul(gw, invstd));
                            }
                            if (ctx.needs(2)) {
                              ASSIGN_OR_RETURN(gb, ts::sum(gy, dims));
                            }
                            return in_input_dtypes({gx, gw, gb}, dtypes);
                          });
}

}  // namespace

absl::StatusOr<autograd::Variable> batch_norm(const autograd::Variable& x, const Tensor& running_mean,
                                              const Tensor& running_var, const autograd::Variable& weight,
                                              const autograd::Variable& bias, bool training, double momentum,
                                              double eps) {
  if (!x.defined()) return absl::InvalidArgumentError("batch_norm: input is undefined");
  RETURN_IF_ERROR(check_inputs(x.data(), running_mean, running_var,
                               weight.defined() ? weight.data() : Tensor(),
                               bias.defined() ? bias.data() : Tensor(), training, momentum, eps));
  if (training) return batch_norm_training(x, running_mean, running_var, weight, bias, momentum, eps);
  return batch_norm_eval(x, running_mean, running_var, weight, bias, eps);
}

}  // namespace ts::nn::functional
