#include "optim/clip.h"

#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::optim {

absl::StatusOr<double> clip_grad_norm_(absl::Span<const autograd::Variable> params, double max_norm,
                                       double norm_type, bool error_if_nonfinite) {
  if (!(norm_type > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("clip_grad_norm_: norm_type must be > 0 or infinity, got ", norm_type));
  }
  if (std::isnan(max_norm) || max_norm < 0) {
    return absl::InvalidArgumentError(absl::StrCat("clip_grad_norm_: max_norm must be >= 0, got ", max_norm));
  }
  autograd::NoGradGuard no_grad;
  const bool inf_norm = std::isinf(norm_type);

  // Per-tensor norms, gathered per device and reduced there, so the host
  // waits once per device rather than once per tensor.
  std::vector<Tensor> grads;
  std::map<std::pair<DeviceType, int>, std::vector<Tensor>> norms_by_device;
  for (const autograd::Variable& param : params) {
    if (!param.defined() || !param.grad().defined()) continue;
    const Tensor& grad = param.grad();
    if (!is_floating(grad.dtype())) {
      return absl::InvalidArgumentError(
          absl::StrCat("clip_grad_norm_: gradient ", grad.describe(), " is not floating-point"));
    }
    grads.push_back(grad);
    Tensor wide = grad;
    if (is_reduced_float(grad.dtype())) {
      ASSIGN_OR_RETURN(wide, to(grad, DType::kF32));
    }
    ASSIGN_OR_RETURN(Tensor n, norm(wide, norm_type));
    ASSIGN_OR_RETURN(n, to(n, DType::kF64));
    norms_by_device[{grad.device().type, grad.device().index}].push_back(std::move(n));
  }
  if (grads.empty()) return 0.0;

  double total = 0;
  for (const auto& [device, norms] : norms_by_device) {
    ASSIGN_OR_RETURN(Tensor stacked, stack(norms, 0));
    ASSIGN_OR_RETURN(Tensor device_norm, norm(stacked, norm_type));
    ASSIGN_OR_RETURN(const double part, item<double>(device_norm));
    total = inf_norm ? std::max(total, part) : total + std::pow(part, norm_type);
    if (std::isnan(part)) total = part;
  }
  if (!inf_norm) total = std::pow(total, 1.0 / norm_type);

  if (!std::isfinite(total) && error_if_nonfinite) {
    return absl::InvalidArgumentError(absl::StrCat("clip_grad_norm_: the total norm of order ", norm_type,
                                                   " of the gradients is ", total));
  }
  const double clip_coef = max_norm / (total + 1e-6);
  if (clip_coef < 1) {
    for (const Tensor& grad : grads) {
      ASSIGN_OR_RETURN(Tensor scaled, mul(grad, clip_coef));
      RETURN_IF_ERROR(copy_(grad, scaled));
    }
  }
  return total;
}

}  // namespace ts::optim
