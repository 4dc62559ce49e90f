// Dropout: in training, zeroes each element with probability p and scales the
// rest by 1/(1-p) (inverted dropout, the mask drawn from the default
// generator); the identity in eval.
#pragma once

#include <memory>

#include "nn/module.h"

namespace ts::nn {

class Dropout final : public Module {
 public:
  // p in [0, 1]; p = 1 zeroes everything, as PyTorch.
  static absl::StatusOr<std::shared_ptr<Dropout>> create(double p = 0.5);
  absl::StatusOr<Variable> forward(const Variable& x) override;

  double p() const { return p_; }

 private:
  explicit Dropout(double p) : Module("Dropout"), p_(p) {}
  double p_;
};

}  // namespace ts::nn
