#include "nn/relu.h"

#include "autograd/ops.h"

namespace ts::nn {

absl::StatusOr<Variable> ReLU::forward(const Variable& x) { return autograd::relu(x); }

}  // namespace ts::nn
