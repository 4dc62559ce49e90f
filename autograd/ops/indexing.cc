// Backward of index_select and gather: scatter the gradient back, summing
// where an index repeats.
#include <utility>

#include "autograd/function.h"
#include "autograd/ops/grad_utils.h"

namespace ts::autograd {

Variable index_select(const Variable& x, int64_t dim, const Tensor& index) {
  Tensor out = ts::index_select(x.data(), dim, index);
  const int64_t d = normalize_dim("index_select", dim, x.dim());
  const Tensor xd = x.data();
  return record("index_select", {x}, std::move(out), [xd, d, index](const GradContext& ctx) {
    // The 1-D index laid along dim d and broadcast to the gradient's shape.
    Shape along(xd.dim(), 1);
    along[d] = index.numel();
    const Tensor idx = index.view(along).expand(ctx.grad().shape());
    const Tensor zero = ts::zeros(xd.shape(), {ctx.grad().dtype(), xd.device()});
    return std::vector<Tensor>{ts::scatter_add(zero, d, idx, ctx.grad())};
  });
}

Variable gather(const Variable& x, int64_t dim, const Tensor& index) {
  Tensor out = ts::gather(x.data(), dim, index);
  const Tensor xd = x.data();
  return record("gather", {x}, std::move(out), [xd, dim, index](const GradContext& ctx) {
    const Tensor zero = ts::zeros(xd.shape(), {ctx.grad().dtype(), xd.device()});
    return std::vector<Tensor>{ts::scatter_add(zero, dim, index, ctx.grad())};
  });
}

}  // namespace ts::autograd
