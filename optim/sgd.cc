#include "optim/sgd.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "optim/cuda/fused_sgd.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

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
    case DType::kF32: return cpu_sgd<float>(u);
    case DType::kF64: return cpu_sgd<double>(u);
    case DType::kF16: return cpu_sgd<Half>(u);
    case DType::kBF16: return cpu_sgd<BFloat16>(u);
    default: return;  // parameters are checked to be floating at creation
  }
}

absl::Status check_non_negative(const char* field, double value) {
  if (!std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Sgd: ", field, " must be finite and >= 0, got ", value));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status validate(const SgdOptions& options) {
  RETURN_IF_ERROR(check_non_negative("lr", options.lr));
  RETURN_IF_ERROR(check_non_negative("momentum", options.momentum));
  RETURN_IF_ERROR(check_non_negative("weight_decay", options.weight_decay));
  if (!std::isfinite(options.dampening)) {
    return absl::InvalidArgumentError(absl::StrCat("Sgd: dampening must be finite, got ", options.dampening));
  }
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Sgd: nesterov momentum requires momentum > 0 and dampening 0, got momentum ",
                     options.momentum, " and dampening ", options.dampening));
  }
  return absl::OkStatus();
}

absl::StatusOr<Sgd> Sgd::create(std::vector<autograd::Variable> params, SgdOptions options) {
  return create({SgdParamGroup{std::move(params), {}, options}});
}

absl::StatusOr<Sgd> Sgd::create(std::vector<std::pair<std::string, autograd::Variable>> named_params,
                                SgdOptions options) {
  SgdParamGroup group{{}, {}, options};
  for (auto& [name, param] : named_params) {
    group.names.push_back(std::move(name));
    group.params.push_back(std::move(param));
  }
  return create({std::move(group)});
}

absl::StatusOr<Sgd> Sgd::create(std::vector<SgdParamGroup> param_groups) {
  if (param_groups.empty()) return absl::InvalidArgumentError("Sgd: no parameter groups");
  std::vector<Group> groups;
  std::set<const void*> seen_params;
  std::set<std::string> seen_names;
  for (size_t gi = 0; gi < param_groups.size(); ++gi) {
    SgdParamGroup& pg = param_groups[gi];
    const std::string where = absl::StrCat("Sgd: parameter group ", gi);
    if (absl::Status s = validate(pg.options); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
    }
    if (!pg.names.empty() && pg.names.size() != pg.params.size()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " has ", pg.params.size(), " parameters but ",
                                                     pg.names.size(), " names"));
    }
    Group group{pg.options, {}};
    for (size_t i = 0; i < pg.params.size(); ++i) {
      const autograd::Variable& param = pg.params[i];
      std::string name = pg.names.empty() ? absl::StrCat(gi, ".", i) : pg.names[i];
      if (name.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": parameter ", i, " has an empty name"));
      }
      if (!param.defined()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": parameter \"", name, "\" is undefined"));
      }
      if (!is_floating(param.dtype())) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": parameter \"", name, "\" is ",
                                                       param.data().describe(), ", not floating-point"));
      }
      if (!seen_params.insert(param.id()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": parameter \"", name, "\" appears more than once"));
      }
      if (!seen_names.insert(name).second) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": name \"", name, "\" is used twice"));
      }
      group.slots.push_back(Slot{param, std::move(name), Tensor(), 0});
    }
    groups.push_back(std::move(group));
  }
  return Sgd(std::move(groups));
}

absl::Status Sgd::step() {
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
      if (grad.shape() != param.shape() || grad.dtype() != param.dtype() || !(grad.device() == param.device())) {
        return absl::InvalidArgumentError(absl::StrCat("Sgd.step: parameter \"", slot.name, "\" is ",
                                                       param.describe(), " but its gradient is ",
                                                       grad.describe()));
      }
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
      ASSIGN_OR_RETURN(u.param, contiguous(u.param));
    }
    ASSIGN_OR_RETURN(u.grad, contiguous(u.grad));
    if (u.options.momentum != 0 && u.first) {
      ASSIGN_OR_RETURN(u.momentum_buffer, Tensor::allocate(u.param.shape(), u.param.dtype(), u.param.device()));
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
      RETURN_IF_ERROR(cuda::fused_sgd_step(updates));
    } else {
      for (const SgdUpdate& u : updates) RETURN_IF_ERROR(cuda::fused_sgd_step({u}));
    }
  }
  for (Work& w : work) {
    if (w.write_back.defined()) RETURN_IF_ERROR(copy_(w.write_back, w.update.param));
    w.slot->momentum_buffer = w.update.momentum_buffer;
    ++w.slot->steps;
  }
  return absl::OkStatus();
}

void Sgd::zero_grad() {
  for (Group& group : groups_) {
    for (Slot& slot : group.slots) slot.param.clear_grad();
  }
}

const Sgd::Group& Sgd::group(int index) const {
  if (index < 0 || index >= num_groups()) {
    std::fprintf(stderr, "Sgd: parameter group %d out of range [0, %d)\n", index, num_groups());
    std::abort();
  }
  return groups_[index];
}

double Sgd::lr(int group_index) const { return group(group_index).options.lr; }

void Sgd::set_lr(int group_index, double lr) {
  group(group_index);  // range check
  groups_[group_index].options.lr = lr;
}

const SgdOptions& Sgd::options(int group_index) const { return group(group_index).options; }

namespace {
std::string lr_key(size_t group) { return absl::StrCat("param_groups.", group, ".lr"); }
std::string step_key(const std::string& name) { return absl::StrCat("state.", name, ".step"); }
std::string buffer_key(const std::string& name) { return absl::StrCat("state.", name, ".momentum_buffer"); }
}  // namespace

absl::StatusOr<NamedTensors> Sgd::state() const {
  NamedTensors out;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    ASSIGN_OR_RETURN(Tensor lr, scalar_f64(groups_[gi].options.lr));
    out.emplace_back(lr_key(gi), std::move(lr));
  }
  for (const Group& group : groups_) {
    for (const Slot& slot : group.slots) {
      ASSIGN_OR_RETURN(Tensor steps, scalar_i64(slot.steps));
      out.emplace_back(step_key(slot.name), std::move(steps));
      if (slot.momentum_buffer.defined()) {
        ASSIGN_OR_RETURN(Tensor buffer, clone(slot.momentum_buffer));
        out.emplace_back(buffer_key(slot.name), std::move(buffer));
      }
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
    int64_t steps;
    Tensor buffer;
  };
  std::vector<std::vector<Loaded>> loaded(groups_.size());
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    for (const Slot& slot : groups_[gi].slots) {
      ASSIGN_OR_RETURN(int64_t steps, reader.take_i64(step_key(slot.name)));
      if (steps < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Sgd.load_state: entry \"", step_key(slot.name), "\" is negative: ", steps));
      }
      Tensor buffer;
      // A buffer exists exactly when the parameter has taken a step with
      // momentum; an unexpected one is reported by finish().
      if (steps > 0 && groups_[gi].options.momentum != 0) {
        const Tensor& param = slot.param.data();
        ASSIGN_OR_RETURN(Tensor saved, reader.take_tensor(buffer_key(slot.name), param.shape(), param.dtype()));
        ASSIGN_OR_RETURN(buffer, Tensor::allocate(param.shape(), param.dtype(), param.device()));
        RETURN_IF_ERROR(copy_(buffer, saved));
      }
      loaded[gi].push_back({steps, std::move(buffer)});
    }
  }
  RETURN_IF_ERROR(reader.finish());
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    groups_[gi].options.lr = lrs[gi];
    for (size_t i = 0; i < groups_[gi].slots.size(); ++i) {
      groups_[gi].slots[i].steps = loaded[gi][i].steps;
      groups_[gi].slots[i].momentum_buffer = std::move(loaded[gi][i].buffer);
    }
  }
  return absl::OkStatus();
}

}  // namespace ts::optim
