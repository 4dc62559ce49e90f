#include "optim/sgd.h"

#include <cmath>
#include <map>
#include <set>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "autograd/grad_mode.h"
#include "base/error.h"
#include "base/status_macros.h"
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

SgdParamGroup group_of(std::vector<std::pair<std::string, autograd::Variable>> named_params,
                       const SgdOptions& options) {
  SgdParamGroup group{{}, {}, options};
  for (auto& [name, param] : named_params) {
    group.names.push_back(std::move(name));
    group.params.push_back(std::move(param));
  }
  return group;
}

}  // namespace

void validate(const SgdOptions& options) { check_options(options, "Sgd"); }

Sgd::Sgd(std::vector<autograd::Variable> params, SgdOptions options)
    : Sgd(std::vector<SgdParamGroup>{SgdParamGroup{std::move(params), {}, options}}) {}

Sgd::Sgd(std::vector<std::pair<std::string, autograd::Variable>> named_params, SgdOptions options)
    : Sgd(std::vector<SgdParamGroup>{group_of(std::move(named_params), options)}) {}

Sgd::Sgd(std::vector<SgdParamGroup> param_groups) {
  TS_CHECK(!param_groups.empty(), "Sgd: no parameter groups");
  std::set<const void*> seen_params;
  std::set<std::string> seen_names;
  for (size_t gi = 0; gi < param_groups.size(); ++gi) {
    SgdParamGroup& pg = param_groups[gi];
    const std::string where = absl::StrCat("Sgd: parameter group ", gi);
    check_options(pg.options, where);
    TS_CHECK(pg.names.empty() || pg.names.size() == pg.params.size(), where, " has ", pg.params.size(),
             " parameters but ", pg.names.size(), " names");
    Group group{pg.options, {}};
    for (size_t i = 0; i < pg.params.size(); ++i) {
      const autograd::Variable& param = pg.params[i];
      std::string name = pg.names.empty() ? absl::StrCat(gi, ".", i) : std::move(pg.names[i]);
      TS_CHECK(!name.empty(), where, ": parameter ", i, " has an empty name");
      TS_CHECK(param.defined(), where, ": parameter \"", name, "\" is undefined");
      TS_CHECK(is_floating(param.dtype()), where, ": parameter \"", name, "\" is ", param.data().describe(),
               ", not floating-point");
      TS_CHECK(seen_params.insert(param.id()).second, where, ": parameter \"", name, "\" appears more than once");
      TS_CHECK(seen_names.insert(name).second, where, ": name \"", name, "\" is used twice");
      group.slots.push_back(Slot{param, std::move(name), Tensor(), 0});
    }
    groups_.push_back(std::move(group));
  }
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
      const Tensor& grad = slot.param.grad();
      if (!grad.defined()) continue;
      const Tensor& param = slot.param.data();
      TS_CHECK(grad.shape() == param.shape() && grad.dtype() == param.dtype() && grad.device() == param.device(),
               "Sgd.step: parameter \"", slot.name, "\" is ", param.describe(), " but its gradient is ",
               grad.describe());
      const bool first = !slot.momentum_buffer.defined();
      work.push_back({&slot, SgdUpdate{param, grad, slot.momentum_buffer, first, group.options}, Tensor()});
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
    w.slot->momentum_buffer = w.update.momentum_buffer;
    ++w.slot->steps;
  }
}

void Sgd::zero_grad() {
  for (Group& group : groups_) {
    for (Slot& slot : group.slots) slot.param.clear_grad();
  }
}

void Sgd::check_group(int index) const {
  TS_CHECK_INDEX(index >= 0 && index < num_groups(), "Sgd: parameter group ", index, " out of range [0, ", num_groups(),
                 ")");
}

double Sgd::lr(int group) const {
  check_group(group);
  return groups_[group].options.lr;
}

void Sgd::set_lr(int group, double lr) {
  check_group(group);
  groups_[group].options.lr = lr;
}

const SgdOptions& Sgd::options(int group) const {
  check_group(group);
  return groups_[group].options;
}

namespace {
std::string lr_key(size_t group) { return absl::StrCat("param_groups.", group, ".lr"); }
std::string step_key(const std::string& name) { return absl::StrCat("state.", name, ".step"); }
std::string buffer_key(const std::string& name) { return absl::StrCat("state.", name, ".momentum_buffer"); }
}  // namespace

NamedTensors Sgd::state() const {
  NamedTensors out;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    out.emplace_back(lr_key(gi), scalar_tensor(groups_[gi].options.lr, {DType::kF64}));
  }
  for (const Group& group : groups_) {
    for (const Slot& slot : group.slots) {
      out.emplace_back(step_key(slot.name), scalar_tensor(slot.steps, {DType::kI64}));
      if (slot.momentum_buffer.defined()) out.emplace_back(buffer_key(slot.name), clone(slot.momentum_buffer));
    }
  }
  return out;
}

absl::Status Sgd::load_state(const NamedTensors& state) {
  ASSIGN_OR_RETURN(StateReader reader, StateReader::create(state, "Sgd.load_state"));
  std::vector<double> lrs;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    ASSIGN_OR_RETURN(double lr, reader.take_f64(lr_key(gi)));
    if (!std::isfinite(lr) || lr < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Sgd.load_state: entry \"", lr_key(gi), "\" holds an invalid lr ", lr));
    }
    lrs.push_back(lr);
  }
  struct Loaded {
    Slot* slot;
    int64_t steps;
    Tensor buffer;  // the checked entry, then its copy on the parameter's device
  };
  std::vector<Loaded> loaded;
  for (Group& group : groups_) {
    for (Slot& slot : group.slots) {
      ASSIGN_OR_RETURN(int64_t steps, reader.take_i64(step_key(slot.name)));
      if (steps < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Sgd.load_state: entry \"", step_key(slot.name), "\" is negative: ", steps));
      }
      Tensor saved;
      // A buffer exists exactly when the parameter has taken a step with
      // momentum; an unexpected one is reported by finish().
      if (steps > 0 && group.options.momentum != 0) {
        const Tensor& param = slot.param.data();
        ASSIGN_OR_RETURN(saved, reader.take_tensor(buffer_key(slot.name), param.shape(), param.dtype()));
      }
      loaded.push_back({&slot, steps, std::move(saved)});
    }
  }
  RETURN_IF_ERROR(reader.finish());
  // Every entry checked: copying the buffers can only fail for want of
  // memory, an Error of the op surface, returned as this Status. Fresh
  // copies, so the live buffers never alias the caller's state.
  RETURN_IF_ERROR(capture([&] {
    for (Loaded& l : loaded) {
      if (!l.buffer.defined()) continue;
      const Tensor& param = l.slot->param.data();
      Tensor copy = Tensor::allocate(param.shape(), param.dtype(), param.device());
      copy_(copy, l.buffer);
      l.buffer = std::move(copy);
    }
  }));
  for (size_t gi = 0; gi < groups_.size(); ++gi) groups_[gi].options.lr = lrs[gi];
  for (Loaded& l : loaded) {
    l.slot->steps = l.steps;
    l.slot->momentum_buffer = std::move(l.buffer);
  }
  return absl::OkStatus();
}

}  // namespace ts::optim
