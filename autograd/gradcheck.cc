#include "autograd/gradcheck.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::autograd {
namespace {

// Jacobian as [input element][output element] per checked input.
using Jacobian = std::vector<std::vector<double>>;

std::vector<double> evaluate(const GradcheckFn& fn, const std::vector<Variable>& inputs) {
  NoGradGuard no_grad;
  return to_vector<double>(fn(inputs).data());
}

// Where element k (in row-major order, as to_vector lists the gradients)
// lies in t's memory.
int64_t memory_offset(const Tensor& t, int64_t k) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    offset += k % t.size(d) * t.stride(d);
    k /= t.size(d);
  }
  return offset;
}

// The check itself; errors it throws (fn's own among them) become the verdict.
void check_gradients(const GradcheckFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  std::vector<Variable> vars;
  std::vector<size_t> checked;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!is_floating(inputs[i].dtype())) {
      vars.emplace_back(inputs[i]);
      continue;
    }
    // Private and dense (channels-last stays so, for the layers that
    // compute in that layout): perturbed in place below.
    vars.emplace_back(clone(to(to(inputs[i], Device::cpu()), DType::kF64)), /*requires_grad=*/true);
    checked.push_back(i);
  }

  const Variable out = fn(vars);
  TS_CHECK(out.dtype() == DType::kF64, "gradcheck: the function returned ", out.data().describe(),
           "; it must compute in f64");
  const int64_t n_out = out.numel();

  // Analytical: one backward per output element, with a one-hot gradient.
  std::vector<Jacobian> analytical(inputs.size());
  for (size_t i : checked) {
    analytical[i].assign(inputs[i].numel(), std::vector<double>(n_out));
  }
  for (int64_t j = 0; j < n_out; ++j) {
    for (size_t i : checked) vars[i].clear_grad();
    Tensor seed = zeros(out.shape(), {DType::kF64});
    seed.data<double>()[j] = 1.0;
    if (out.requires_grad()) out.backward(seed, /*retain_graph=*/true);
    for (size_t i : checked) {
      if (!vars[i].grad().defined()) continue;  // does not depend on this input
      const std::vector<double> values = to_vector<double>(vars[i].grad());
      for (size_t k = 0; k < values.size(); ++k) analytical[i][k][j] = values[k];
    }
  }

  // Numerical: central differences, one input element at a time.
  for (size_t i : checked) {
    const Tensor& input = vars[i].data();
    for (int64_t k = 0; k < inputs[i].numel(); ++k) {
      double& element = input.data<double>()[memory_offset(input, k)];
      const double original = element;
      element = original + options.eps;
      const std::vector<double> plus = evaluate(fn, vars);
      element = original - options.eps;
      const std::vector<double> minus = evaluate(fn, vars);
      element = original;
      for (int64_t j = 0; j < n_out; ++j) {
        const double numerical = (plus[j] - minus[j]) / (2 * options.eps);
        const double analytic = analytical[i][k][j];
        TS_CHECK_CODE(absl::StatusCode::kInternal,
                      std::abs(analytic - numerical) <= options.atol + options.rtol * std::abs(numerical),
                      "gradcheck: d output[", j, "] / d input ", i, "[", k, "]: backward gives ", analytic,
                      ", central differences give ", numerical, " (input ", inputs[i].describe(), ")");
      }
    }
  }
}

}  // namespace

absl::Status gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions options) {
  return capture([&] { check_gradients(fn, inputs, options); });
}

}  // namespace ts::autograd
