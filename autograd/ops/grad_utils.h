// Shared pieces of backward formulas: reducing a gradient to its input's
// shape and dtype, and the return type every backward closure has.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "autograd/ops.h"
#include "tensor/ops.h"

namespace ts::autograd {

using Grads = absl::StatusOr<std::vector<Tensor>>;

// `grad` summed over broadcast dims and cast to the dtype of `input`, which
// is what the engine expects back for that input.
absl::StatusOr<Tensor> grad_like(const Tensor& grad, const Tensor& input);

}  // namespace ts::autograd
