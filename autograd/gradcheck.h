// Checks a function's backward against central differences in float64: the
// full Jacobian, element by element, for small inputs in tests.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "autograd/variable.h"

namespace ts::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  // An entry passes when |analytical - numerical| <= atol + rtol * |numerical|.
  double atol = 1e-5;
  double rtol = 1e-3;
};

using GradcheckFn = std::function<Variable(const std::vector<Variable>&)>;

// Floating-point inputs become float64 CPU leaves that require a gradient;
// others (indices, masks) are passed unchanged. `fn` must compute in float64.
// The verdict is a Status: a mismatch names the input, the element and both
// derivatives; an Error that fn throws is returned as its Status.
absl::Status gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions options = {});

}  // namespace ts::autograd
