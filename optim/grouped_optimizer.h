// What the optimizers over parameter groups share (Sgd, Adam): the groups
// with their options, as torch.optim's param_groups; each parameter's slot
// with its name, step count and state buffers; the checks of the parameter
// lists; lr access; and the state() / load_state() format:
//   "param_groups.<g>.lr"     f64 [], per group
//   "state.<name>.step"       i64 [], updates the parameter has taken
//   "state.<name>.<buffer>"   for each buffer its group's options call for,
//                             once the parameter has taken a step: the
//                             parameter's shape and dtype, or a per-parameter
//                             scalar (f64 [], on the CPU); torch.optim's state
//                             names (momentum_buffer, exp_avg, eta, ax, ...)
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "autograd/variable.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "optim/named_state.h"
#include "optim/optimizer.h"
#include "tensor/ops.h"

namespace ts::optim {

// Parameters sharing options (e.g. batch-norm parameters without weight
// decay).
template <typename Options>
struct ParamGroup {
  std::vector<autograd::Variable> params;
  // One unique name per parameter, used in state() entries; empty: names are
  // "<group>.<index>".
  std::vector<std::string> names;
  Options options;
};

// A per-parameter state entry: a tensor like the parameter, or a scalar.
struct StateBuffer {
  std::string name;
  bool scalar = false;
};

template <typename Options>
class GroupedOptimizer : public Optimizer {
 public:
  void zero_grad() override {
    for (Group& group : groups_) {
      for (Slot& slot : group.slots) slot.param.clear_grad();
    }
  }

  int num_groups() const override { return static_cast<int>(groups_.size()); }
  double lr(int group) const override { return options(group).lr; }
  void set_lr(int group, double lr) override {
    check_group(group);
    // As the constructor and load_state check it: state() must load again.
    TS_CHECK(std::isfinite(lr) && lr >= 0, type_, ".set_lr: parameter group ", group,
             ": lr must be finite and >= 0, got ", lr);
    groups_[group].options.lr = lr;
  }
  using Optimizer::set_lr;
  const Options& options(int group) const {
    check_group(group);
    return groups_[group].options;
  }

  // Copies of every entry.
  NamedTensors state() const override {
    NamedTensors out;
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      out.emplace_back(lr_key(gi), scalar_tensor(groups_[gi].options.lr, {DType::kF64}));
    }
    for (const Group& group : groups_) {
      const std::vector<StateBuffer> specs = state_buffers(group.options);
      for (const Slot& slot : group.slots) {
        out.emplace_back(step_key(slot.name), scalar_tensor(slot.steps, {DType::kI64}));
        for (size_t b = 0; b < slot.buffers.size(); ++b) {
          out.emplace_back(buffer_key(slot.name, specs[b].name), clone(slot.buffers[b]));
        }
      }
    }
    return out;
  }

  // Checks every entry first (a missing, extra or mis-shaped one is an error
  // naming it, and nothing is loaded then), then copies the buffers to their
  // parameters' devices.
  absl::Status load_state(const NamedTensors& state) override {
    const std::string what = absl::StrCat(type_, ".load_state");
    ASSIGN_OR_RETURN(StateReader reader, StateReader::create(state, what));
    std::vector<double> lrs;
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      ASSIGN_OR_RETURN(double lr, reader.take_f64(lr_key(gi)));
      if (!std::isfinite(lr) || lr < 0) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": entry \"", lr_key(gi), "\" holds an invalid lr ", lr));
      }
      lrs.push_back(lr);
    }
    struct Loaded {
      Slot* slot;
      int64_t steps;
      std::vector<Tensor> buffers;  // the checked entries, then their copies where the live ones live
      std::vector<bool> scalar;     // per buffer: a scalar, kept on the CPU
    };
    std::vector<Loaded> loaded;
    for (Group& group : groups_) {
      const std::vector<StateBuffer> specs = state_buffers(group.options);
      for (Slot& slot : group.slots) {
        ASSIGN_OR_RETURN(int64_t steps, reader.take_i64(step_key(slot.name)));
        if (steps < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(what, ": entry \"", step_key(slot.name), "\" is negative: ", steps));
        }
        Loaded l{&slot, steps, {}, {}};
        // Buffers exist exactly when the parameter has taken a step; an
        // unexpected one is reported by finish().
        if (steps > 0) {
          const Tensor& param = slot.param.data();
          for (const StateBuffer& spec : specs) {
            ASSIGN_OR_RETURN(Tensor saved,
                             reader.take_tensor(buffer_key(slot.name, spec.name), spec.scalar ? Shape{} : param.shape(),
                                                spec.scalar ? DType::kF64 : param.dtype()));
            l.buffers.push_back(std::move(saved));
            l.scalar.push_back(spec.scalar);
          }
        }
        loaded.push_back(std::move(l));
      }
    }
    RETURN_IF_ERROR(reader.finish());
    // Every entry checked: copying the buffers can only fail for want of
    // memory, an Error of the op surface, returned as this Status. Fresh
    // copies, so the live buffers never alias the caller's state.
    RETURN_IF_ERROR(capture([&] {
      for (Loaded& l : loaded) {
        const Device device = l.slot->param.device();
        for (size_t b = 0; b < l.buffers.size(); ++b) {
          // Scalars stay on the CPU; tensors (0-dim ones of a 0-dim
          // parameter too) go to their parameter's device.
          Tensor& buffer = l.buffers[b];
          Tensor copy = Tensor::allocate(buffer.shape(), buffer.dtype(), l.scalar[b] ? Device::cpu() : device);
          copy_(copy, buffer);
          buffer = std::move(copy);
        }
      }
    }));
    for (size_t gi = 0; gi < groups_.size(); ++gi) groups_[gi].options.lr = lrs[gi];
    for (Loaded& l : loaded) {
      l.slot->steps = l.steps;
      l.slot->buffers = std::move(l.buffers);
    }
    return absl::OkStatus();
  }

 protected:
  struct Slot {
    autograd::Variable param;
    std::string name;
    int64_t steps = 0;
    // Empty until the parameter's first step, then one per
    // state_buffers(options), in that order.
    std::vector<Tensor> buffers;
  };
  struct Group {
    Options options;
    std::vector<Slot> slots;
  };

  // Throws unless every group's options pass `check_options` (which names
  // `where`, e.g. "Sgd: parameter group 1") and every parameter is a defined
  // floating-point Variable that appears once, under a unique, non-empty
  // name. `type` ("Sgd") begins every error.
  GroupedOptimizer(std::string type, std::vector<ParamGroup<Options>> groups,
                   void (*check_options)(const Options&, absl::string_view where))
      : type_(std::move(type)) {
    TS_CHECK(!groups.empty(), type_, ": no parameter groups");
    std::set<const void*> seen_params;
    std::set<std::string> seen_names;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      ParamGroup<Options>& pg = groups[gi];
      const std::string where = absl::StrCat(type_, ": parameter group ", gi);
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
        group.slots.push_back(Slot{param, std::move(name), 0, {}});
      }
      groups_.push_back(std::move(group));
    }
  }

  // One group holding `named_params`, for the single-group constructors.
  static std::vector<ParamGroup<Options>> one_group(
      std::vector<std::pair<std::string, autograd::Variable>> named_params, const Options& options) {
    ParamGroup<Options> group{{}, {}, options};
    for (auto& [name, param] : named_params) {
      group.names.push_back(std::move(name));
      group.params.push_back(std::move(param));
    }
    return {std::move(group)};
  }

  // The state a parameter of a group with `options` keeps once it has
  // stepped.
  virtual std::vector<StateBuffer> state_buffers(const Options& options) const = 0;

  // A parameter taking part in a step, with its group's options.
  struct Stepping {
    Slot* slot;
    const Options* options;
  };

  // The parameters that have a gradient, every gradient checked against its
  // parameter's shape, dtype and device first, so that a mismatch throws
  // (naming the parameter) before anything changes.
  std::vector<Stepping> parameters_with_gradients() {
    std::vector<Stepping> out;
    for (Group& group : groups_) {
      for (Slot& slot : group.slots) {
        const Tensor& grad = slot.param.grad();
        if (!grad.defined()) continue;
        const Tensor& param = slot.param.data();
        TS_CHECK(grad.shape() == param.shape() && grad.dtype() == param.dtype() && grad.device() == param.device(),
                 type_, ".step: parameter \"", slot.name, "\" is ", param.describe(), " but its gradient is ",
                 grad.describe());
        out.push_back({&slot, &group.options});
      }
    }
    return out;
  }

  // Runs one update per parameter: CPU ones with cpu(update), CUDA ones
  // batched per device and dtype into one cuda(span) call each (fused) or
  // one call per update.
  template <typename Update, typename Cpu, typename Cuda>
  static void run_updates(const std::vector<Update>& updates, bool fused, Cpu cpu, Cuda cuda) {
    std::map<std::pair<int, DType>, std::vector<Update>> cuda_batches;
    for (const Update& u : updates) {
      if (u.param.device().is_cpu()) {
        cpu(u);
      } else {
        cuda_batches[{u.param.device().index, u.param.dtype()}].push_back(u);
      }
    }
    for (const auto& [key, batch] : cuda_batches) {
      if (fused) {
        cuda(absl::MakeConstSpan(batch));
      } else {
        for (const Update& u : batch) cuda(absl::MakeConstSpan(&u, 1));
      }
    }
  }

  std::string type_;
  std::vector<Group> groups_;

 private:
  // Throws kOutOfRange unless 0 <= index < num_groups().
  void check_group(int index) const {
    TS_CHECK_INDEX(index >= 0 && index < num_groups(), type_, ": parameter group ", index, " out of range [0, ",
                   num_groups(), ")");
  }

  static std::string lr_key(size_t group) { return absl::StrCat("param_groups.", group, ".lr"); }
  static std::string step_key(const std::string& name) { return absl::StrCat("state.", name, ".step"); }
  static std::string buffer_key(const std::string& name, const std::string& buffer) {
    return absl::StrCat("state.", name, ".", buffer);
  }
};

}  // namespace ts::optim
