// Dropout: in training, zeroes each element with probability p and scales the
// rest by 1/(1-p) (inverted dropout, the mask drawn from the default
// generator); the identity in eval. LockedDropout (AWD-LSTM's variational
// dropout) draws one mask per sequence and applies it at every time step.
#pragma once

#include "nn/module.h"

namespace ts::nn {

// Inverted dropout of x with probability p in [0, 1], always applied (the
// modules apply it in training only).
Variable dropout(const Variable& x, double p);

class Dropout final : public Module {
 public:
  // p in [0, 1]; p = 1 zeroes everything, as PyTorch.
  explicit Dropout(double p = 0.5);
  Variable forward(const Variable& x);

  double p() const { return p_; }

 private:
  double p_;
};

// Over x [T, B, ...] (time-major) or [B, T, ...] (batch_first): one mask of
// shape [1, B, ...] (or [B, 1, ...]) shared by all T steps.
class LockedDropout final : public Module {
 public:
  // p in [0, 1].
  explicit LockedDropout(double p = 0.5, bool batch_first = false);
  Variable forward(const Variable& x);

  double p() const { return p_; }

 private:
  double p_;
  bool batch_first_;
};

}  // namespace ts::nn
