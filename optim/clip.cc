#include "optim/clip.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::optim {

double clip_grad_norm_(absl::Span<const autograd::Variable> params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  TS_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be > 0 or infinity, got ", norm_type);
  TS_CHECK(!std::isnan(max_norm) && max_norm >= 0, "clip_grad_norm_: max_norm must be >= 0, got ", max_norm);
  autograd::NoGradGuard no_grad;
  const bool inf_norm = std::isinf(norm_type);

  // Per-tensor norms, gathered per device and reduced there, so the host
  // waits once per device rather than once per tensor.
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
  if (grads.empty()) return 0.0;

  double total = 0;
  for (const auto& [device, norms] : norms_by_device) {
    const double part = item<double>(norm(stack(norms, 0), norm_type));
    total = inf_norm ? std::max(total, part) : total + std::pow(part, norm_type);
    if (std::isnan(part)) total = part;
  }
  if (!inf_norm) total = std::pow(total, 1.0 / norm_type);

  TS_CHECK(std::isfinite(total) || !error_if_nonfinite, "clip_grad_norm_: the total norm of order ", norm_type,
           " of the gradients is ", total);
  const double clip_coef = max_norm / (total + 1e-6);
  if (clip_coef < 1) {
    for (const Tensor& grad : grads) copy_(grad, grad * clip_coef);
  }
  return total;
}

}  // namespace ts::optim
