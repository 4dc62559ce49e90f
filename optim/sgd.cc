#include "optim/sgd.h"

#include <cmath>
#include <map>
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

std::vector<std::string> Sgd::buffer_names(const SgdOptions& options) const {
  if (options.momentum == 0) return {};
  return {"momentum_buffer"};
}

void Sgd::step() {
  autograd::NoGradGuard no_grad;
  struct Work {
    Slot* slot;
    SgdUpdate update;
    Tensor write_back;  // the parameter itself when `update` works on a contiguous copy
  };
  std::vector<Work> work;
  for (Group& group : groups_) {
    for (Slot& slot : group.slots) {
      if (!slot.param.grad().defined()) continue;
      check_gradient(slot);
      const bool first = slot.buffers.empty();
      const Tensor buffer = first ? Tensor() : slot.buffers[0];
      work.push_back({&slot, SgdUpdate{slot.param.data(), slot.param.grad(), buffer, first, group.options}, Tensor()});
    }
  }

  // Every gradient checked: make what the drivers need (contiguous operands,
  // fresh buffers), then run them, CUDA tensors batched by device and dtype.
  for (Work& w : work) {
    SgdUpdate& u = w.update;
    if (!u.param.is_contiguous()) {
      w.write_back = u.param;
      u.param = contiguous(u.param);
    }
    u.grad = contiguous(u.grad);
    if (u.options.momentum != 0 && u.first) {
      u.momentum_buffer = Tensor::allocate(u.param.shape(), u.param.dtype(), u.param.device());
    }
  }
  std::map<std::pair<int, DType>, std::vector<SgdUpdate>> cuda_batches;
  for (const Work& w : work) {
    const SgdUpdate& u = w.update;
    if (u.param.device().is_cpu()) {
      cpu_sgd_step(u);
    } else {
      cuda_batches[{u.param.device().index, u.param.dtype()}].push_back(u);
    }
  }
  for (const auto& [key, updates] : cuda_batches) {
    if (fused_) {
      cuda::fused_sgd_step(updates);
    } else {
      for (const SgdUpdate& u : updates) cuda::fused_sgd_step({u});
    }
  }
  for (Work& w : work) {
    if (w.write_back.defined()) copy_(w.write_back, w.update.param);
    if (w.update.momentum_buffer.defined()) w.slot->buffers = {w.update.momentum_buffer};
    ++w.slot->steps;
  }
}

}  // namespace ts::optim
