// Averaged SGD exactly as torch.optim.ASGD (the optimizer AWD-LSTM switches
// to in NT-ASGD: t0 = 0, lambd = 0): an SGD step with the step size eta
// decaying as lr / (1 + lambd * lr * t)^alpha, and `ax`, the running average
// of the parameter from step t0 on, which evaluation and checkpoints of an
// averaged run use. As torch, eta and the averaging weight mu are kept per
// parameter in float32 (torch's default scalar dtype) and take effect one
// step after they are computed.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "optim/grouped_optimizer.h"

namespace ts::optim {

// torch.optim.ASGD's options and defaults.
struct AsgdOptions {
  double lr = 1e-2;
  double lambd = 1e-4;  // decay term
  double alpha = 0.75;  // power for the eta update
  double t0 = 1e6;      // the step at which averaging starts
  double weight_decay = 0;
};

using AsgdParamGroup = ParamGroup<AsgdOptions>;

// Throws (kInvalidArgument, naming the field) unless lr, lambd, alpha, t0
// and weight_decay are finite and >= 0.
void validate(const AsgdOptions& options);

// state(): grouped_optimizer.h's entries, with the scalars
// "state.<name>.eta" and "state.<name>.mu" and the tensor "state.<name>.ax"
// once the parameter has taken a step (torch.optim.ASGD's names).
class Asgd final : public GroupedOptimizer<AsgdOptions> {
 public:
  Asgd(std::vector<autograd::Variable> params, AsgdOptions options);
  Asgd(std::vector<std::pair<std::string, autograd::Variable>> named_params, AsgdOptions options);
  explicit Asgd(std::vector<AsgdParamGroup> groups);

  // Throws, before changing anything, when a gradient does not match its
  // parameter's shape, dtype or device; the error names the parameter.
  void step() override;

  // Each parameter's average (its name, ax), for evaluation; a parameter
  // that has not stepped yet is its own average.
  std::vector<std::pair<std::string, Tensor>> averages() const;

 private:
  std::vector<StateBuffer> state_buffers(const AsgdOptions& options) const override;
};

}  // namespace ts::optim
