// Backward of index_select and gather: scatter the gradient back, summing
// where an index repeats.
#include <utility>

#include "autograd/function.h"
#include "autograd/ops/grad_utils.h"
#include "tensor/status_macros.h"

namespace ts::autograd {

absl::StatusOr<Variable> index_select(const Variable& x, int64_t dim, const Tensor& index) {
  ASSIGN_OR_RETURN(Tensor out, ts::index_select(x.data(), dim, index));
  ASSIGN_OR_RETURN(const int64_t d, normalize_dim("index_select", dim, x.dim()));
  const Tensor xd = x.data();
  return record("index_select", {x}, std::move(out), [xd, d, index](const GradContext& ctx) -> Grads {
    // The 1-D index laid along dim d and broadcast to the gradient's shape.
    Shape along(xd.dim(), 1);
    along[d] = index.numel();
    ASSIGN_OR_RETURN(Tensor idx, index.view(along));
    ASSIGN_OR_RETURN(idx, idx.expand(ctx.grad().shape()));
    ASSIGN_OR_RETURN(Tensor zero, ts::zeros(xd.shape(), {ctx.grad().dtype(), xd.device()}));
    ASSIGN_OR_RETURN(Tensor g, ts::scatter_add(zero, d, idx, ctx.grad()));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> gather(const Variable& x, int64_t dim, const Tensor& index) {
  ASSIGN_OR_RETURN(Tensor out, ts::gather(x.data(), dim, index));
  const Tensor xd = x.data();
  return record("gather", {x}, std::move(out), [xd, dim, index](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor zero, ts::zeros(xd.shape(), {ctx.grad().dtype(), xd.device()}));
    ASSIGN_OR_RETURN(Tensor g, ts::scatter_add(zero, dim, index, ctx.grad()));
    return std::vector<Tensor>{g};
  });
}

}  // namespace ts::autograd
