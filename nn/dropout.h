// Dropout: in training, zeroes each element with probability p and scales the
// rest by 1/(1-p) (inverted dropout, the mask drawn from the default
// generator); the identity in eval.
#pragma once

#include "nn/module.h"

namespace ts::nn {

class Dropout final : public Module {
 public:
  // p in [0, 1]; p = 1 zeroes everything, as PyTorch.
  explicit Dropout(double p = 0.5);
  Variable forward(const Variable& x);

  double p() const { return p_; }

 private:
  double p_;
};

}  // namespace ts::nn
