// gradcheck of a module: its forward with respect to the input and each of
// its own parameters (put in as gradcheck's leaves with set_parameter). The
// module is converted to f64 first.
#pragma once

#include "absl/status/status.h"
#include "nn/module.h"
#include "tensor/tensor.h"

namespace ts::nn::testing {

absl::Status gradcheck_module(Module& m, const Tensor& x);

}  // namespace ts::nn::testing
