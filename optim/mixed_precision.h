// The optimizer side of mixed-precision training as apex's "O2" does it: the
// model's f16/bf16 parameters each get an f32 master copy, which is what the
// optimizer updates; the model's f32 parameters (batch norm's) are their own
// masters. Per step:
//   loss -> scale_loss(loss).backward()   gradients of the scaled loss
//   unscale_gradients(step)               the model's gradients / scale into
//                                         the masters' (one fused pass and one
//                                         host read per device), and the loss
//                                         scaler's verdict: step or skip
//   (clip the masters' gradients), optimizer.step() on the masters
//   copy_masters_to_model()               the masters rounded into the model
// A skipped step leaves the masters and the optimizer's state untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "autograd/variable.h"
#include "optim/loss_scaler.h"
#include "optim/named_state.h"

namespace ts::optim {

class MixedPrecision {
 public:
  using NamedParameter = std::pair<std::string, autograd::Variable>;

  // `params`: the model's, floating-point, with unique names. Masters start
  // at the parameters' values.
  MixedPrecision(std::vector<NamedParameter> params, LossScalerOptions scaler);

  // What the optimizer (and gradient clipping) works on, under the model's
  // names: the masters, f32 or f64.
  const std::vector<NamedParameter>& masters() const { return masters_; }

  // loss * scale.
  autograd::Variable scale_loss(const autograd::Variable& loss) const;

  // Whether any rank found a gradient that is not finite, given this rank's
  // finding: for ranks whose gradients differ (decentralized training), so
  // that all skip or all step. Without it, one rank could skip a step its
  // neighbours take, and their collectives would part ways. DDP's ranks hold
  // the same averaged gradients and need none.
  using OverflowVote = std::function<absl::StatusOr<bool>(bool found_here)>;

  // After the backward (and DDP's averaging of the model's gradients): each
  // model gradient times 1/scale into its master's gradient, checked for inf
  // and NaN (and put to `vote` when given); then the loss scaler's update.
  // Returns whether to take the step: on false the masters have no gradients
  // and the scale has dropped. When it can drop no further, an error naming
  // `step` and the first parameter whose gradient is not finite.
  absl::StatusOr<bool> unscale_gradients(int64_t step, const OverflowVote& vote = nullptr);

  // After the optimizer's step: every master rounded into its model
  // parameter (one launch per device on CUDA).
  void copy_masters_to_model();

  const DynamicLossScaler& scaler() const { return scaler_; }

  // The scaler's state and the masters held apart from the model
  // ("master.<name>"), for an exact resume; load_state checks every entry
  // before it changes anything.
  NamedTensors state() const;
  absl::Status load_state(const NamedTensors& state);

 private:
  struct Pair {
    autograd::Variable param, master;  // the same Variable for a param that is its own master
    Tensor master_grad;                // f32 buffer of a separate master, reused every step
  };
  bool separate(const Pair& p) const { return p.master.id() != p.param.id(); }

  std::vector<Pair> pairs_;
  std::vector<NamedParameter> masters_;
  DynamicLossScaler scaler_;
};

}  // namespace ts::optim
