#include "autograd/ops/grad_utils.h"

#include "tensor/status_macros.h"

namespace ts::autograd {

absl::StatusOr<Tensor> sum_to_shape(const Tensor& grad, Dims shape) {
  if (Dims(grad.shape()) == shape) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  if (lead < 0) {
    return absl::InvalidArgumentError("sum_to_shape: gradient " + grad.describe() +
                                      " has fewer dims than " + shape_str(shape));
  }
  Shape dims;
  for (int64_t i = 0; i < grad.dim(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && grad.size(i) != 1)) dims.push_back(i);
  }
  ASSIGN_OR_RETURN(Tensor summed, ts::sum(grad, dims, /*keepdim=*/true));
  return ts::reshape(summed, shape);
}

absl::StatusOr<Tensor> grad_like(const Tensor& grad, const Tensor& input) {
  ASSIGN_OR_RETURN(Tensor g, sum_to_shape(grad, input.shape()));
  if (g.dtype() != input.dtype()) return ts::to(g, input.dtype());
  return g;
}

}  // namespace ts::autograd
