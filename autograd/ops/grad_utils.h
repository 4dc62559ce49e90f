// Shared piece of backward formulas: a gradient reduced to its input's shape
// and dtype.
#pragma once

#include "autograd/ops.h"
#include "tensor/ops.h"

namespace ts::autograd {

// `grad` summed over broadcast dims and cast to the dtype of `input`, which
// is what the engine expects back for that input.
Tensor grad_like(const Tensor& grad, const Tensor& input);

}  // namespace ts::autograd
