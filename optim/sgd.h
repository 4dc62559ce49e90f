// Stochastic gradient descent with momentum, dampening, Nesterov momentum and
// weight decay, exactly as torch.optim.SGD, over autograd Variables grouped
// into parameter groups with their own options. CUDA parameters are updated
// by one fused kernel launch per device and dtype (optim/cuda/fused_sgd.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "autograd/variable.h"
#include "optim/optimizer.h"
#include "optim/sgd_rule.h"

namespace ts::optim {

// Parameters sharing options, as PyTorch's param_groups (e.g. batch-norm
// parameters without weight decay).
struct SgdParamGroup {
  std::vector<autograd::Variable> params;
  // One unique name per parameter, used in state() entries; empty: names are
  // "<group>.<index>".
  std::vector<std::string> names;
  SgdOptions options;
};

// Throws (kInvalidArgument, naming the field) unless the options are valid
// for torch.optim.SGD: lr, momentum and weight_decay non-negative and finite,
// dampening finite, Nesterov only with momentum > 0 and dampening 0. Sgd's
// constructors check every group with it; config code can check options
// before any parameter exists.
void validate(const SgdOptions& options);

class Sgd final : public Optimizer {
 public:
  // Throws unless every group's options are valid and every parameter is a
  // defined floating-point Variable that appears once, under a unique,
  // non-empty name; the error names the group and the field or parameter.
  Sgd(std::vector<autograd::Variable> params, SgdOptions options);
  Sgd(std::vector<std::pair<std::string, autograd::Variable>> named_params, SgdOptions options);
  explicit Sgd(std::vector<SgdParamGroup> groups);

  // Throws, before changing anything, when a gradient does not match its
  // parameter's shape, dtype or device; the error names the parameter.
  void step() override;
  void zero_grad() override;

  int num_groups() const override { return static_cast<int>(groups_.size()); }
  double lr(int group) const override;
  void set_lr(int group, double lr) override;
  using Optimizer::set_lr;
  const SgdOptions& options(int group) const;

  // CUDA parameters: one kernel launch per device and dtype (true, the
  // default) or one per tensor (false; for comparison and benchmarks).
  void set_fused(bool fused) { fused_ = fused; }

  // Entries: "param_groups.<g>.lr" (f64 []), and per parameter
  // "state.<name>.step" (i64 [], updates applied so far) and, once it has
  // taken a step with momentum, "state.<name>.momentum_buffer" (the
  // parameter's shape, dtype and device), all copies. load_state copies them
  // in (buffers to their parameter's device) after checking all of them: a
  // missing, extra or mis-shaped entry is an error naming it, and nothing is
  // loaded then.
  NamedTensors state() const override;
  absl::Status load_state(const NamedTensors& state) override;

 private:
  struct Slot {
    autograd::Variable param;
    std::string name;
    Tensor momentum_buffer;  // created on the parameter's first step with momentum
    int64_t steps = 0;
  };
  struct Group {
    SgdOptions options;
    std::vector<Slot> slots;
  };

  // Throws kOutOfRange unless 0 <= index < num_groups().
  void check_group(int index) const;

  std::vector<Group> groups_;
  bool fused_ = true;
};

}  // namespace ts::optim
