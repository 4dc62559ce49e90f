#include "optim/asgd.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/string_view.h"
#include "autograd/grad_mode.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::optim {
namespace {

// `where` names the options' owner ("Asgd", "Asgd: parameter group 1").
void check_options(const AsgdOptions& o, absl::string_view where) {
  const auto check_non_negative = [&](const char* field, double value) {
    TS_CHECK(std::isfinite(value) && value >= 0, where, ": ", field, " must be finite and >= 0, got ", value);
  };
  check_non_negative("lr", o.lr);
  check_non_negative("lambd", o.lambd);
  check_non_negative("alpha", o.alpha);
  check_non_negative("t0", o.t0);
  check_non_negative("weight_decay", o.weight_decay);
}

// torch keeps eta and mu as tensors of its default scalar dtype, float32.
double as_torch_scalar(double v) { return static_cast<double>(static_cast<float>(v)); }

enum Buffer { kEta = 0, kMu = 1, kAx = 2 };

}  // namespace

void validate(const AsgdOptions& options) { check_options(options, "Asgd"); }

Asgd::Asgd(std::vector<autograd::Variable> params, AsgdOptions options)
    : Asgd(std::vector<AsgdParamGroup>{AsgdParamGroup{std::move(params), {}, options}}) {}

Asgd::Asgd(std::vector<std::pair<std::string, autograd::Variable>> named_params, AsgdOptions options)
    : Asgd(one_group(std::move(named_params), options)) {}

Asgd::Asgd(std::vector<AsgdParamGroup> groups) : GroupedOptimizer("Asgd", std::move(groups), check_options) {}

std::vector<StateBuffer> Asgd::state_buffers(const AsgdOptions&) const {
  return {{"eta", true}, {"mu", true}, {"ax", false}};
}

// torch's _single_tensor_asgd, operation by operation, in the parameter's
// dtype on its device.
void Asgd::step() {
  autograd::NoGradGuard no_grad;
  for (const Stepping& s : parameters_with_gradients()) {
    Slot& slot = *s.slot;
    const AsgdOptions& o = *s.options;
    const Tensor& param = slot.param.data();
    if (slot.buffers.empty()) {
      slot.buffers = {scalar_tensor(as_torch_scalar(o.lr), {DType::kF64}), scalar_tensor(1.0, {DType::kF64}),
                      zeros_like(param)};
    }
    const int64_t step = slot.steps + 1;
    const double eta = item<double>(slot.buffers[kEta]), mu = item<double>(slot.buffers[kMu]);
    Tensor grad = slot.param.grad();
    if (o.weight_decay != 0) grad = grad + param * o.weight_decay;
    const Tensor updated = param * (1 - o.lambd * eta) + grad * -eta;
    copy_(param, updated);
    if (mu != 1) {
      copy_(slot.buffers[kAx], slot.buffers[kAx] + (updated - slot.buffers[kAx]) * mu);
    } else {
      copy_(slot.buffers[kAx], updated);
    }
    const double t = static_cast<double>(step);
    slot.buffers[kEta] =
        scalar_tensor(as_torch_scalar(o.lr / std::pow(1 + o.lambd * o.lr * t, o.alpha)), {DType::kF64});
    slot.buffers[kMu] = scalar_tensor(as_torch_scalar(1 / std::max(1.0, t - o.t0)), {DType::kF64});
    slot.steps = step;
  }
}

std::vector<std::pair<std::string, Tensor>> Asgd::averages() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Group& group : groups_) {
    for (const Slot& slot : group.slots) {
      out.emplace_back(slot.name, slot.buffers.empty() ? slot.param.data() : slot.buffers[kAx]);
    }
  }
  return out;
}

}  // namespace ts::optim
