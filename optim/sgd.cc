#include "optim/sgd.h"

#include <cmath>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "autograd/grad_mode.h"
#include "base/error.h"
#include "optim/cuda/fused_sgd.h"
#include "tensor/ops.h"

namespace ts::optim {
namespace {

// The CPU driver: one pass over each tensor, in float for f32/f16/bf16 and
// in double for f64.
template <typename T>
void cpu_sgd(const SgdUpdate& u) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const SgdCoefficients<C> k(u.options);
  T* p = u.param.data<T>();
  const T* g = u.grad.data<T>();
  const int64_t n = u.param.numel();
  if (!u.momentum_buffer.defined()) {
    for (int64_t i = 0; i < n; ++i) {
      C unused = 0;
      p[i] = T(sgd_element(C(p[i]), C(g[i]), unused, false, k));
    }
    return;
  }
  T* b = u.momentum_buffer.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    C buf = u.first ? C(0) : C(b[i]);
    p[i] = T(sgd_element(C(p[i]), C(g[i]), buf, u.first, k));
    b[i] = T(buf);
  }
}

void cpu_sgd_step(const SgdUpdate& u) {
  switch (u.param.dtype()) {
    case DType::kF32:
      return cpu_sgd<float>(u);
    case DType::kF64:
      return cpu_sgd<double>(u);
    case DType::kF16:
      return cpu_sgd<Half>(u);
    case DType::kBF16:
      return cpu_sgd<BFloat16>(u);
    default:
      return;  // parameters are checked to be floating at creation
  }
}

void check_non_negative(absl::string_view where, const char* field, double value) {
  TS_CHECK(std::isfinite(value) && value >= 0, where, ": ", field, " must be finite and >= 0, got ", value);
}

// `where` names the options' owner ("Sgd", "Sgd: parameter group 1").
void check_options(const SgdOptions& options, absl::string_view where) {
  check_non_negative(where, "lr", options.lr);
  check_non_negative(where, "momentum", options.momentum);
  check_non_negative(where, "weight_decay", options.weight_decay);
  TS_CHECK(std::isfinite(options.dampening), where, ": dampening must be finite, got ", options.dampening);
  TS_CHECK(!options.nesterov || (options.momentum > 0 && options.dampening == 0), where,
           ": nesterov momentum requires momentum > 0 and dampening 0, got momentum ", options.momentum,
           " and dampening ", options.dampening);
}

}  // namespace

void validate(const SgdOptions& options) { check_options(options, "Sgd"); }

Sgd::Sgd(std::vector<autograd::Variable> params, SgdOptions options)
    : Sgd(std::vector<SgdParamGroup>{SgdParamGroup{std::move(params), {}, options}}) {}

Sgd::Sgd(std::vector<std::pair<std::string, autograd::Variable>> named_params, SgdOptions options)
    : Sgd(one_group(std::move(named_params), options)) {}

Sgd::Sgd(std::vector<SgdParamGroup> groups) : GroupedOptimizer("Sgd", std::move(groups), check_options) {}

std::vector<StateBuffer> Sgd::state_buffers(const SgdOptions& options) const {
  if (options.momentum == 0) return {};
  return {{"momentum_buffer"}};
}

void Sgd::step() {
  autograd::NoGradGuard no_grad;
  const std::vector<Stepping> stepping = parameters_with_gradients();
  // Contiguous operands for the drivers (a strided parameter is updated in
  // a copy and written back) and fresh buffers on a first step.
  std::vector<SgdUpdate> updates;
  for (const Stepping& s : stepping) {
    const Tensor& param = s.slot->param.data();
    SgdUpdate u{contiguous(param), contiguous(s.slot->param.grad()), Tensor(), s.slot->buffers.empty(), *s.options};
    if (u.options.momentum != 0) {
      u.momentum_buffer = u.first ? Tensor::allocate(param.shape(), param.dtype(), param.device()) : s.slot->buffers[0];
    }
    updates.push_back(std::move(u));
  }
  run_updates(updates, fused_, cpu_sgd_step, cuda::fused_sgd_step);
  for (size_t i = 0; i < stepping.size(); ++i) {
    Slot& slot = *stepping[i].slot;
    const SgdUpdate& u = updates[i];
    if (!slot.param.data().is_contiguous()) copy_(slot.param.data(), u.param);
    if (u.momentum_buffer.defined()) slot.buffers = {u.momentum_buffer};
    ++slot.steps;
  }
}

}  // namespace ts::optim
