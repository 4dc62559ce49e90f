#include "optim/clip.h"

#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::optim {

Tensor clip_grad_norm_(absl::Span<const autograd::Variable> params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  TS_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be > 0 or infinity, got ", norm_type);
  TS_CHECK(!std::isnan(max_norm) && max_norm >= 0, "clip_grad_norm_: max_norm must be >= 0, got ", max_norm);
  autograd::NoGradGuard no_grad;

  // Per-tensor norms, gathered per device and reduced there.
  std::vector<Tensor> grads;
  std::map<std::pair<DeviceType, int>, std::vector<Tensor>> norms_by_device;
  for (const autograd::Variable& param : params) {
    if (!param.defined() || !param.grad().defined()) continue;
    const Tensor& grad = param.grad();
    TS_CHECK(is_floating(grad.dtype()), "clip_grad_norm_: gradient ", grad.describe(), " is not floating-point");
    grads.push_back(grad);
    const Tensor wide = is_reduced_float(grad.dtype()) ? to(grad, DType::kF32) : grad;
    norms_by_device[{grad.device().type, grad.device().index}].push_back(to(norm(wide, norm_type), DType::kF64));
  }
  if (norms_by_device.empty()) return scalar_tensor(0.0, {DType::kF64});

  // The total where the first device's gradients are: the norm of the
  // devices' norms (a copy between devices, where there are several).
  const Device home = grads.front().device();
  std::vector<Tensor> parts;
  for (const auto& [device, norms] : norms_by_device) parts.push_back(to(norm(stack(norms, 0), norm_type), home));
  const Tensor total = parts.size() == 1 ? parts[0] : norm(stack(parts, 0), norm_type);

  if (error_if_nonfinite) {
    const double value = item<double>(total);
    TS_CHECK(std::isfinite(value), "clip_grad_norm_: the total norm of order ", norm_type, " of the gradients is ",
             value);
  }
  // torch's rule, max_norm / (norm + 1e-6) clamped to at most 1 (a NaN
  // stays NaN), computed where the norm is: nothing is read back, so the host
  // runs on into the optimizer. A factor of 1 leaves a gradient's bits as
  // they are; 16-bit gradients are scaled in f32 and rounded once.
  const Tensor coef = max_norm / (total + 1e-6);
  const Tensor applied = clamp(coef, std::nullopt, 1.0);
  std::map<std::tuple<DeviceType, int, DType>, Tensor> factors;
  for (const Tensor& grad : grads) {
    const DType compute = grad.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
    Tensor& factor = factors[{grad.device().type, grad.device().index, compute}];
    if (!factor.defined()) factor = to(to(applied, grad.device()), compute);
    copy_(grad, grad * factor);
  }
  return total;
}

}  // namespace ts::optim
