// Flatten: merges dims start_dim..end_dim into one (default: all but the
// batch dim), e.g. [N, C, 1, 1] -> [N, C] before a classifier.
#pragma once

#include <cstdint>

#include "nn/module.h"

namespace ts::nn {

class Flatten final : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim_(start_dim), end_dim_(end_dim) {}
  Variable forward(const Variable& x);

 private:
  int64_t start_dim_;
  int64_t end_dim_;
};

}  // namespace ts::nn
