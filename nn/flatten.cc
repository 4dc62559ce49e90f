#include "nn/flatten.h"

#include "autograd/ops.h"

namespace ts::nn {

Variable Flatten::forward(const Variable& x) { return autograd::flatten(x, start_dim_, end_dim_); }

}  // namespace ts::nn
