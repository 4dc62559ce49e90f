// Checks a function's backward against central differences in float64: the
// full Jacobian, element by element, for small inputs in tests.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "autograd/variable.h"

namespace ts::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  // An entry passes when |analytical - numerical| <= atol + rtol * |numerical|.
  double atol = 1e-5;
  double rtol = 1e-3;
};

using GradcheckFn = std::function<absl::StatusOr<Variable>(const std::vector<Variable>&)>;

// Floating-point inputs become float64 CPU leaves that require a gradient;
// others (indices, masks) are passed unchanged. `fn` must compute in float64.
// The error names the input, the elements and both derivatives.
absl::Status gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                       GradcheckOptions options = {});

}  // namespace ts::autograd
