// Backward of reductions, matmul and softmax.
#include <utility>

#include "autograd/function.h"
#include "autograd/ops/grad_utils.h"
#include "tensor/status_macros.h"

namespace ts::autograd {
namespace {

// The reduced gradient with the reduced dims put back as size 1, then
// broadcast (as a view) to the input's shape.
absl::StatusOr<Tensor> expand_reduced(const Tensor& grad, const Tensor& input, uint64_t mask) {
  Shape kept(input.shape().begin(), input.shape().end());
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (mask >> d & 1) kept[d] = 1;
  }
  ASSIGN_OR_RETURN(Tensor g, ts::reshape(grad, kept));
  return g.expand(input.shape());
}

}  // namespace

absl::StatusOr<Variable> sum(const Variable& x, Dims dims, bool keepdim) {
  ASSIGN_OR_RETURN(Tensor out, ts::sum(x.data(), dims, keepdim));
  ASSIGN_OR_RETURN(uint64_t mask, normalize_dim_mask("sum", dims, x.dim()));
  const Tensor xd = x.data();
  return record("sum", {x}, std::move(out), [xd, mask](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, expand_reduced(ctx.grad(), xd, mask));
    ASSIGN_OR_RETURN(g, grad_like(g, xd));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> mean(const Variable& x, Dims dims, bool keepdim) {
  ASSIGN_OR_RETURN(Tensor out, ts::mean(x.data(), dims, keepdim));
  ASSIGN_OR_RETURN(uint64_t mask, normalize_dim_mask("mean", dims, x.dim()));
  const Tensor xd = x.data();
  int64_t count = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (mask >> d & 1) count *= x.size(d);
  }
  return record("mean", {x}, std::move(out), [xd, mask, count](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::div(ctx.grad(), Scalar(static_cast<double>(count))));
    ASSIGN_OR_RETURN(g, expand_reduced(g, xd, mask));
    ASSIGN_OR_RETURN(g, grad_like(g, xd));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> matmul(const Variable& a, const Variable& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::matmul(a.data(), b.data()));
  const Tensor ad = a.data(), bd = b.data();
  return record("matmul", {a, b}, std::move(out), [ad, bd](const GradContext& ctx) -> Grads {
    // Work on the >= 2-D forms (vectors as a row of a, a column of b), where
    // da = g b^T and db = a^T g, then sum broadcast batch dims away.
    ASSIGN_OR_RETURN(Tensor a2, ad.dim() == 1 ? ad.unsqueeze(0) : absl::StatusOr<Tensor>(ad));
    ASSIGN_OR_RETURN(Tensor b2, bd.dim() == 1 ? bd.unsqueeze(1) : absl::StatusOr<Tensor>(bd));
    Tensor g = ctx.grad();
    if (ad.dim() == 1) {
      ASSIGN_OR_RETURN(g, g.unsqueeze(g.dim() - (bd.dim() == 1 ? 0 : 1)));
    }
    if (bd.dim() == 1) {
      ASSIGN_OR_RETURN(g, g.unsqueeze(g.dim()));
    }
    std::vector<Tensor> grads(2);
    if (ctx.needs(0)) {
      ASSIGN_OR_RETURN(Tensor bt, b2.transpose(-1, -2));
      ASSIGN_OR_RETURN(Tensor ga, ts::matmul(g, bt));
      ASSIGN_OR_RETURN(ga, sum_to_shape(ga, a2.shape()));
      ASSIGN_OR_RETURN(ga, ts::reshape(ga, ad.shape()));
      ASSIGN_OR_RETURN(grads[0], grad_like(ga, ad));
    }
    if (ctx.needs(1)) {
      ASSIGN_OR_RETURN(Tensor at, a2.transpose(-1, -2));
      ASSIGN_OR_RETURN(Tensor gb, ts::matmul(at, g));
      ASSIGN_OR_RETURN(gb, sum_to_shape(gb, b2.shape()));
      ASSIGN_OR_RETURN(gb, ts::reshape(gb, bd.shape()));
      ASSIGN_OR_RETURN(grads[1], grad_like(gb, bd));
    }
    return grads;
  });
}

absl::StatusOr<Variable> softmax(const Variable& x, int64_t dim) {
  ASSIGN_OR_RETURN(Tensor out, ts::softmax(x.data(), dim));
  const Tensor saved_out = out;
  return record("softmax", {x}, std::move(out), [saved_out, dim](const GradContext& ctx) -> Grads {
    // dx = y * (g - sum(g * y))
    ASSIGN_OR_RETURN(Tensor gy, ts::mul(ctx.grad(), saved_out));
    ASSIGN_OR_RETURN(Tensor dot, ts::sum(gy, {dim}, /*keepdim=*/true));
    ASSIGN_OR_RETURN(Tensor centered, ts::sub(ctx.grad(), dot));
    ASSIGN_OR_RETURN(Tensor g, ts::mul(saved_out, centered));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> log_softmax(const Variable& x, int64_t dim) {
  ASSIGN_OR_RETURN(Tensor out, ts::log_softmax(x.data(), dim));
  const Tensor saved_out = out;
  return record("log_softmax", {x}, std::move(out), [saved_out, dim](const GradContext& ctx) -> Grads {
    // dx = g - softmax(x) * sum(g)
    ASSIGN_OR_RETURN(Tensor total, ts::sum(ctx.grad(), {dim}, /*keepdim=*/true));
    ASSIGN_OR_RETURN(Tensor probs, ts::exp(saved_out));
    ASSIGN_OR_RETURN(Tensor scaled, ts::mul(probs, total));
    ASSIGN_OR_RETURN(Tensor g, ts::sub(ctx.grad(), scaled));
    return std::vector<Tensor>{g};
  });
}

}  // namespace ts::autograd
