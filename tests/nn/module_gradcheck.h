// gradcheck of a module: its forward with respect to the input and each of
// its own parameters (put in as gradcheck's leaves with set_parameter). The
// module is converted to f64 first.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "nn/module.h"
#include "tensor/tensor.h"

namespace ts::nn::testing {

// `forward` runs m's forward on its argument.
absl::Status gradcheck_module(Module& m, const Tensor& x, const std::function<Variable(const Variable&)>& forward);

// M has `Variable forward(const Variable&)`.
template <typename M>
absl::Status gradcheck_module(M& m, const Tensor& x) {
  return gradcheck_module(m, x, [&m](const Variable& v) { return m.forward(v); });
}

}  // namespace ts::nn::testing
