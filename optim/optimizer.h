// The interface every optimizer (SGD now; Adam and ASGD later) offers to the
// training loop, the LR schedules and checkpointing. Like the rest of the op
// surface, a misuse throws ts::Error; only load_state returns a Status, since
// a state read from a checkpoint file may be wrong without any bug.
#pragma once

#include "absl/status/status.h"
#include "optim/named_state.h"

namespace ts::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // Updates every parameter that has a gradient, in place, without recording
  // a graph. Parameters without a gradient are skipped.
  virtual void step() = 0;
  // Drops every parameter's gradient (PyTorch's zero_grad(set_to_none=True)):
  // the next backward writes fresh ones.
  virtual void zero_grad() = 0;

  // Learning rates of the parameter groups, which schedules set; a group
  // index out of range throws (kOutOfRange).
  virtual int num_groups() const = 0;
  virtual double lr(int group) const = 0;
  virtual void set_lr(int group, double lr) = 0;
  void set_lr(double lr) {
    for (int g = 0; g < num_groups(); ++g) set_lr(g, lr);
  }

  // Everything a resumed run needs to continue exactly (buffers, counts,
  // rates), as named tensors holding copies; load_state takes the same form
  // from an optimizer over the same parameters and checks it entry by entry.
  virtual NamedTensors state() const = 0;
  virtual absl::Status load_state(const NamedTensors& state) = 0;
};

}  // namespace ts::optim
