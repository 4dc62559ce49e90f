// Backward of reductions, matmul and softmax.
#include <utility>

#include "autograd/function.h"
#include "autograd/ops/grad_utils.h"

namespace ts::autograd {
namespace {

// The reduced gradient with the reduced dims put back as size 1, then
// broadcast (as a view) to the input's shape.
Tensor expand_reduced(const Tensor& grad, const Tensor& input, uint64_t mask) {
  Shape kept(input.shape().begin(), input.shape().end());
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (mask >> d & 1) kept[d] = 1;
  }
  return ts::reshape(grad, kept).expand(input.shape());
}

}  // namespace

Variable sum(const Variable& x, Dims dims, bool keepdim) {
  Tensor out = ts::sum(x.data(), dims, keepdim);
  const uint64_t mask = normalize_dim_mask("sum", dims, x.dim());
  const Tensor xd = x.data();
  return record("sum", {x}, std::move(out), [xd, mask](const GradContext& ctx) {
    return std::vector<Tensor>{grad_like(expand_reduced(ctx.grad(), xd, mask), xd)};
  });
}

Variable mean(const Variable& x, Dims dims, bool keepdim) {
  Tensor out = ts::mean(x.data(), dims, keepdim);
  const uint64_t mask = normalize_dim_mask("mean", dims, x.dim());
  const Tensor xd = x.data();
  int64_t count = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (mask >> d & 1) count *= x.size(d);
  }
  return record("mean", {x}, std::move(out), [xd, mask, count](const GradContext& ctx) {
    return std::vector<Tensor>{grad_like(expand_reduced(ctx.grad() / static_cast<double>(count), xd, mask), xd)};
  });
}

Variable matmul(const Variable& a, const Variable& b) {
  Tensor out = ts::matmul(a.data(), b.data());
  const Tensor ad = a.data(), bd = b.data();
  return record("matmul", {a, b}, std::move(out), [ad, bd](const GradContext& ctx) {
    // Work on the >= 2-D forms (vectors as a row of a, a column of b), where
    // da = g b^T and db = a^T g, then sum broadcast batch dims away.
    const Tensor a2 = ad.dim() == 1 ? ad.unsqueeze(0) : ad;
    const Tensor b2 = bd.dim() == 1 ? bd.unsqueeze(1) : bd;
    Tensor g = ctx.grad();
    if (ad.dim() == 1) g = g.unsqueeze(g.dim() - (bd.dim() == 1 ? 0 : 1));
    if (bd.dim() == 1) g = g.unsqueeze(g.dim());
    std::vector<Tensor> grads(2);
    if (ctx.needs(0)) {
      const Tensor ga = sum_to_shape(ts::matmul(g, b2.transpose(-1, -2)), a2.shape());
      grads[0] = grad_like(ts::reshape(ga, ad.shape()), ad);
    }
    if (ctx.needs(1)) {
      const Tensor gb = sum_to_shape(ts::matmul(a2.transpose(-1, -2), g), b2.shape());
      grads[1] = grad_like(ts::reshape(gb, bd.shape()), bd);
    }
    return grads;
  });
}

Variable softmax(const Variable& x, int64_t dim) {
  Tensor out = ts::softmax(x.data(), dim);
  const Tensor y = out;
  return record("softmax", {x}, std::move(out), [y, dim](const GradContext& ctx) {
    // dx = y * (g - sum(g * y))
    const Tensor& g = ctx.grad();
    return std::vector<Tensor>{y * (g - ts::sum(g * y, {dim}, /*keepdim=*/true))};
  });
}

Variable log_softmax(const Variable& x, int64_t dim) {
  Tensor out = ts::log_softmax(x.data(), dim);
  const Tensor y = out;
  return record("log_softmax", {x}, std::move(out), [y, dim](const GradContext& ctx) {
    // dx = g - softmax(x) * sum(g)
    const Tensor& g = ctx.grad();
    return std::vector<Tensor>{g - ts::exp(y) * ts::sum(g, {dim}, /*keepdim=*/true)};
  });
}

}  // namespace ts::autograd
