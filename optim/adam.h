// Adam and AdamW exactly as torch.optim.Adam / torch.optim.AdamW (bias
// correction, eps after the square root, amsgrad, weight decay coupled into
// the gradient or decoupled from it), over autograd Variables grouped into
// parameter groups with their own options. CUDA parameters are updated by
// one fused kernel launch per device and dtype (optim/cuda/fused_adam.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "optim/adam_rule.h"
#include "optim/grouped_optimizer.h"

namespace ts::optim {

using AdamParamGroup = ParamGroup<AdamOptions>;

// Throws (kInvalidArgument, naming the field) unless the options are valid
// for torch.optim.Adam: lr, eps and weight_decay non-negative and finite,
// betas in [0, 1).
void validate(const AdamOptions& options);

// state(): grouped_optimizer.h's entries, with the buffers
// "state.<name>.exp_avg", "state.<name>.exp_avg_sq" and, with amsgrad,
// "state.<name>.max_exp_avg_sq" once the parameter has taken a step
// (torch.optim.Adam's names).
class Adam final : public GroupedOptimizer<AdamOptions> {
 public:
  // Throws unless every group's options are valid and every parameter is a
  // defined floating-point Variable that appears once, under a unique,
  // non-empty name; the error names the group and the field or parameter.
  Adam(std::vector<autograd::Variable> params, AdamOptions options);
  Adam(std::vector<std::pair<std::string, autograd::Variable>> named_params, AdamOptions options);
  explicit Adam(std::vector<AdamParamGroup> groups);

  // Throws, before changing anything, when a gradient does not match its
  // parameter's shape, dtype or device; the error names the parameter.
  void step() override;

  // CUDA parameters: one kernel launch per device and dtype (true, the
  // default) or one per tensor (false; for comparison and benchmarks).
  void set_fused(bool fused) { fused_ = fused; }

 private:
  std::vector<StateBuffer> state_buffers(const AdamOptions& options) const override;

  bool fused_ = true;
};

}  // namespace ts::optim
