#include "optim/adam.h"

#include <cmath>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "autograd/grad_mode.h"
#include "base/error.h"
#include "optim/cuda/fused_adam.h"
#include "tensor/ops.h"

namespace ts::optim {
namespace {

// The CPU driver: one pass over each tensor, in float for f32/f16/bf16 and
// in double for f64.
template <typename T>
void cpu_adam(const AdamUpdate& u) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const AdamCoefficients<C> k(u.options, u.scalars);
  T* p = u.param.data<T>();
  const T* g = u.grad.data<T>();
  T* m = u.exp_avg.data<T>();
  T* v = u.exp_avg_sq.data<T>();
  T* v_max = u.options.amsgrad ? u.max_exp_avg_sq.data<T>() : nullptr;
  const int64_t n = u.param.numel();
  for (int64_t i = 0; i < n; ++i) {
    C mi = C(m[i]), vi = C(v[i]), xi = v_max != nullptr ? C(v_max[i]) : C(0);
    p[i] = T(adam_element(C(p[i]), C(g[i]), mi, vi, xi, k));
    m[i] = T(mi);
    v[i] = T(vi);
    if (v_max != nullptr) v_max[i] = T(xi);
  }
}

void cpu_adam_step(const AdamUpdate& u) {
  switch (u.param.dtype()) {
    case DType::kF32:
      return cpu_adam<float>(u);
    case DType::kF64:
      return cpu_adam<double>(u);
    case DType::kF16:
      return cpu_adam<Half>(u);
    case DType::kBF16:
      return cpu_adam<BFloat16>(u);
    default:
      return;  // parameters are checked to be floating at creation
  }
}

// `where` names the options' owner ("Adam", "Adam: parameter group 1").
void check_options(const AdamOptions& o, absl::string_view where) {
  const auto check_non_negative = [&](const char* field, double value) {
    TS_CHECK(std::isfinite(value) && value >= 0, where, ": ", field, " must be finite and >= 0, got ", value);
  };
  check_non_negative("lr", o.lr);
  check_non_negative("eps", o.eps);
  check_non_negative("weight_decay", o.weight_decay);
  TS_CHECK(o.beta1 >= 0 && o.beta1 < 1, where, ": beta1 must be in [0, 1), got ", o.beta1);
  TS_CHECK(o.beta2 >= 0 && o.beta2 < 1, where, ": beta2 must be in [0, 1), got ", o.beta2);
}

}  // namespace

void validate(const AdamOptions& options) { check_options(options, "Adam"); }

Adam::Adam(std::vector<autograd::Variable> params, AdamOptions options)
    : Adam(std::vector<AdamParamGroup>{AdamParamGroup{std::move(params), {}, options}}) {}

Adam::Adam(std::vector<std::pair<std::string, autograd::Variable>> named_params, AdamOptions options)
    : Adam(one_group(std::move(named_params), options)) {}

Adam::Adam(std::vector<AdamParamGroup> groups) : GroupedOptimizer("Adam", std::move(groups), check_options) {}

std::vector<StateBuffer> Adam::state_buffers(const AdamOptions& options) const {
  if (options.amsgrad) return {{"exp_avg"}, {"exp_avg_sq"}, {"max_exp_avg_sq"}};
  return {{"exp_avg"}, {"exp_avg_sq"}};
}

void Adam::step() {
  autograd::NoGradGuard no_grad;
  const std::vector<Stepping> stepping = parameters_with_gradients();
  // Contiguous operands for the drivers (a strided parameter is updated in
  // a copy and written back); moments start at zero, as torch's, row-major
  // as those copies are (a channels-last parameter's zeros_like would pair
  // another element's moments with each value, and load_state allocates
  // row-major).
  std::vector<AdamUpdate> updates;
  for (const Stepping& s : stepping) {
    const Tensor& param = s.slot->param.data();
    std::vector<Tensor> buffers = s.slot->buffers;
    if (buffers.empty()) {
      for (size_t b = 0; b < state_buffers(*s.options).size(); ++b)
        buffers.push_back(zeros(param.shape(), {param.dtype(), param.device()}));
    }
    const AdamOptions& o = *s.options;
    updates.push_back({contiguous(param), contiguous(s.slot->param.grad()), buffers[0], buffers[1],
                       o.amsgrad ? buffers[2] : Tensor(), o, adam_step_scalars(o, s.slot->steps + 1)});
  }
  run_updates(updates, fused_, cpu_adam_step, cuda::fused_adam_step);
  for (size_t i = 0; i < stepping.size(); ++i) {
    Slot& slot = *stepping[i].slot;
    const AdamUpdate& u = updates[i];
    if (!slot.param.data().is_contiguous()) copy_(slot.param.data(), u.param);
    slot.buffers = {u.exp_avg, u.exp_avg_sq};
    if (u.options.amsgrad) slot.buffers.push_back(u.max_exp_avg_sq);
    ++slot.steps;
  }
}

}  // namespace ts::optim
