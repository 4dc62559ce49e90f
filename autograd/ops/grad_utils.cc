#include "autograd/ops/grad_utils.h"

namespace ts::autograd {

Tensor grad_like(const Tensor& grad, const Tensor& input) {
  return to(sum_to_shape(grad, input.shape()), input.dtype());
}

}  // namespace ts::autograd
