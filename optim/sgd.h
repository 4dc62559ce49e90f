// Stochastic gradient descent with momentum, dampening, Nesterov momentum and
// weight decay, exactly as torch.optim.SGD, over autograd Variables grouped
// into parameter groups with their own options. CUDA parameters are updated
// by one fused kernel launch per device and dtype (optim/cuda/fused_sgd.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "optim/grouped_optimizer.h"
#include "optim/sgd_rule.h"

namespace ts::optim {

using SgdParamGroup = ParamGroup<SgdOptions>;

// Throws (kInvalidArgument, naming the field) unless the options are valid
// for torch.optim.SGD: lr, momentum and weight_decay non-negative and finite,
// dampening finite, Nesterov only with momentum > 0 and dampening 0. Sgd's
// constructors check every group with it; config code can check options
// before any parameter exists.
void validate(const SgdOptions& options);

// state(): grouped_optimizer.h's entries, with the buffer
// "state.<name>.momentum_buffer" once the parameter has taken a step with
// momentum.
class Sgd final : public GroupedOptimizer<SgdOptions> {
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

  // CUDA parameters: one kernel launch per device and dtype (true, the
  // default) or one per tensor (false; for comparison and benchmarks).
  void set_fused(bool fused) { fused_ = fused; }

 private:
  std::vector<StateBuffer> state_buffers(const SgdOptions& options) const override;

  bool fused_ = true;
};

}  // namespace ts::optim
