#include "autograd/gradcheck.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::autograd {
namespace {

// Jacobian as [input element][output element] per checked input.
using Jacobian = std::vector<std::vector<double>>;

absl::StatusOr<std::vector<double>> evaluate(const GradcheckFn& fn,
                                             const std::vector<Variable>& inputs) {
  NoGradGuard no_grad;
  ASSIGN_OR_RETURN(Variable out, fn(inputs));
  ASSIGN_OR_RETURN(Tensor contiguous_out, contiguous(out.data()));
  return to_vector<double>(contiguous_out);
}

}  // namespace

absl::Status gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                       GradcheckOptions options) {
  std::vector<Variable> vars;
  std::vector<size_t> checked;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!is_floating(inputs[i].dtype())) {
      vars.emplace_back(inputs[i]);
      continue;
    }
    ASSIGN_OR_RETURN(Tensor x, to(inputs[i], Device::cpu()));
    ASSIGN_OR_RETURN(x, to(x, DType::kF64));
    ASSIGN_OR_RETURN(x, clone(x));  // private and contiguous: perturbed in place below
    vars.emplace_back(x, /*requires_grad=*/true);
    checked.push_back(i);
  }

  ASSIGN_OR_RETURN(Variable out, fn(vars));
  if (out.dtype() != DType::kF64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gradcheck: the function returned ", out.data().describe(), "; it must compute in f64"));
  }
  const int64_t n_out = out.numel();

  // Analytical: one backward per output element, with a one-hot gradient.
  std::vector<Jacobian> analytical(inputs.size());
  for (size_t i : checked) {
    analytical[i].assign(inputs[i].numel(), std::vector<double>(n_out));
  }
  for (int64_t j = 0; j < n_out; ++j) {
    for (size_t i : checked) vars[i].clear_grad();
    ASSIGN_OR_RETURN(Tensor seed, zeros(out.shape(), {DType::kF64}));
    seed.data<double>()[j] = 1.0;
    if (out.requires_grad()) RETURN_IF_ERROR(out.backward(seed, /*retain_graph=*/true));
    for (size_t i : checked) {
      if (!vars[i].grad().defined()) continue;  // does not depend on this input
      ASSIGN_OR_RETURN(Tensor g, contiguous(vars[i].grad()));
      ASSIGN_OR_RETURN(std::vector<double> values, to_vector<double>(g));
      for (size_t k = 0; k < values.size(); ++k) analytical[i][k][j] = values[k];
    }
  }

  // Numerical: central differences, one input element at a time.
  for (size_t i : checked) {
    double* x = vars[i].data().data<double>();
    for (int64_t k = 0; k < inputs[i].numel(); ++k) {
      const double original = x[k];
      x[k] = original + options.eps;
      ASSIGN_OR_RETURN(std::vector<double> plus, evaluate(fn, vars));
      x[k] = original - options.eps;
      ASSIGN_OR_RETURN(std::vector<double> minus, evaluate(fn, vars));
      x[k] = original;
      for (int64_t j = 0; j < n_out; ++j) {
        const double numerical = (plus[j] - minus[j]) / (2 * options.eps);
        const double analytic = analytical[i][k][j];
        if (!(std::abs(analytic - numerical) <= options.atol + options.rtol * std::abs(numerical))) {
          return absl::InternalError(absl::StrCat(
              "gradcheck: d output[", j, "] / d input ", i, "[", k, "]: backward gives ", analytic,
              ", central differences give ", numerical, " (input ", inputs[i].describe(), ")"));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ts::autograd
