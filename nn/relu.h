// ReLU as a module (no parameters), for Sequential stacks.
#pragma once

#include "nn/module.h"

namespace ts::nn {

class ReLU final : public Module {
 public:
  ReLU() : Module("ReLU") {}
  absl::StatusOr<Variable> forward(const Variable& x) override;
};

}  // namespace ts::nn
