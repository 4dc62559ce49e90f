#include "nn/relu.h"

#include "autograd/ops.h"

namespace ts::nn {

Variable ReLU::forward(const Variable& x) { return autograd::relu(x); }

}  // namespace ts::nn
