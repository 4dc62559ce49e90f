// ReLU as a module (no parameters), for Sequential stacks.
#pragma once

#include "nn/module.h"

namespace ts::nn {

class ReLU final : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Variable forward(const Variable& x);
};

}  // namespace ts::nn
