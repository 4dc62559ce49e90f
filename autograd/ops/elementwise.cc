// Backward formulas of the elementwise ops.
#include <cmath>
#include <numbers>
#include <utility>

#include "autograd/function.h"
#include "autograd/ops/grad_utils.h"
#include "tensor/status_macros.h"

namespace ts::autograd {
namespace {

// An op of one input whose gradient is grad * local(x, out).
using LocalDerivative = std::function<absl::StatusOr<Tensor>(const Tensor& x, const Tensor& out)>;

absl::StatusOr<Variable> unary(const char* name, const Variable& x, Tensor out,
                               LocalDerivative local) {
  const Tensor xd = x.data();
  const Tensor saved_out = out;
  return record(name, {x}, std::move(out),
                [xd, saved_out, local = std::move(local)](const GradContext& ctx) -> Grads {
                  ASSIGN_OR_RETURN(Tensor d, local(xd, saved_out));
                  ASSIGN_OR_RETURN(Tensor g, ts::mul(ctx.grad(), d));
                  ASSIGN_OR_RETURN(g, grad_like(g, xd));
                  return std::vector<Tensor>{g};
                });
}

}  // namespace

absl::StatusOr<Variable> add(const Variable& a, const Variable& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::add(a.data(), b.data()));
  const Tensor ad = a.data(), bd = b.data();
  return record("add", {a, b}, std::move(out), [ad, bd](const GradContext& ctx) -> Grads {
    std::vector<Tensor> grads(2);
    if (ctx.needs(0)) {
      ASSIGN_OR_RETURN(grads[0], grad_like(ctx.grad(), ad));
    }
    if (ctx.needs(1)) {
      ASSIGN_OR_RETURN(grads[1], grad_like(ctx.grad(), bd));
    }
    return grads;
  });
}

absl::StatusOr<Variable> add(const Variable& a, const Scalar& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::add(a.data(), b));
  const Tensor ad = a.data();
  return record("add", {a}, std::move(out), [ad](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, grad_like(ctx.grad(), ad));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> sub(const Variable& a, const Variable& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::sub(a.data(), b.data()));
  const Tensor ad = a.data(), bd = b.data();
  return record("sub", {a, b}, std::move(out), [ad, bd](const GradContext& ctx) -> Grads {
    std::vector<Tensor> grads(2);
    if (ctx.needs(0)) {
      ASSIGN_OR_RETURN(grads[0], grad_like(ctx.grad(), ad));
    }
    if (ctx.needs(1)) {
      ASSIGN_OR_RETURN(Tensor g, ts::neg(ctx.grad()));
      ASSIGN_OR_RETURN(grads[1], grad_like(g, bd));
    }
    return grads;
  });
}

absl::StatusOr<Variable> sub(const Variable& a, const Scalar& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::sub(a.data(), b));
  const Tensor ad = a.data();
  return record("sub", {a}, std::move(out), [ad](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, grad_like(ctx.grad(), ad));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> sub(const Scalar& a, const Variable& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::sub(a, b.data()));
  const Tensor bd = b.data();
  return record("sub", {b}, std::move(out), [bd](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::neg(ctx.grad()));
    ASSIGN_OR_RETURN(g, grad_like(g, bd));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> mul(const Variable& a, const Variable& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::mul(a.data(), b.data()));
  const Tensor ad = a.data(), bd = b.data();
  return record("mul", {a, b}, std::move(out), [ad, bd](const GradContext& ctx) -> Grads {
    std::vector<Tensor> grads(2);
    if (ctx.needs(0)) {
      ASSIGN_OR_RETURN(Tensor g, ts::mul(ctx.grad(), bd));
      ASSIGN_OR_RETURN(grads[0], grad_like(g, ad));
    }
    if (ctx.needs(1)) {
      ASSIGN_OR_RETURN(Tensor g, ts::mul(ctx.grad(), ad));
      ASSIGN_OR_RETURN(grads[1], grad_like(g, bd));
    }
    return grads;
  });
}

absl::StatusOr<Variable> mul(const Variable& a, const Scalar& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::mul(a.data(), b));
  const Tensor ad = a.data();
  return record("mul", {a}, std::move(out), [ad, b](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::mul(ctx.grad(), b));
    ASSIGN_OR_RETURN(g, grad_like(g, ad));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> div(const Variable& a, const Variable& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::div(a.data(), b.data()));
  const Tensor ad = a.data(), bd = b.data(), saved_out = out;
  return record("div", {a, b}, std::move(out),
                [ad, bd, saved_out](const GradContext& ctx) -> Grads {
                  std::vector<Tensor> grads(2);
                  ASSIGN_OR_RETURN(Tensor g_over_b, ts::div(ctx.grad(), bd));
                  if (ctx.needs(0)) {
      ASSIGN_OR_RETURN(grads[0], grad_like(g_over_b, ad));
    }
                  if (ctx.needs(1)) {  // d(a/b)/db = -(a/b)/b
                    ASSIGN_OR_RETURN(Tensor g, ts::mul(g_over_b, saved_out));
                    ASSIGN_OR_RETURN(g, ts::neg(g));
                    ASSIGN_OR_RETURN(grads[1], grad_like(g, bd));
                  }
                  return grads;
                });
}

absl::StatusOr<Variable> div(const Variable& a, const Scalar& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::div(a.data(), b));
  const Tensor ad = a.data();
  return record("div", {a}, std::move(out), [ad, b](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::div(ctx.grad(), b));
    ASSIGN_OR_RETURN(g, grad_like(g, ad));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> pow(const Variable& x, const Scalar& exponent) {
  ASSIGN_OR_RETURN(Tensor out, ts::pow(x.data(), exponent));
  const double p = exponent.to_double();
  return unary("pow", x, std::move(out), [p](const Tensor& x, const Tensor&) -> absl::StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor d, ts::pow(x, p - 1));
    return ts::mul(d, p);
  });
}

absl::StatusOr<Variable> neg(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::neg(x.data()));
  const Tensor xd = x.data();
  return record("neg", {x}, std::move(out), [xd](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::neg(ctx.grad()));
    ASSIGN_OR_RETURN(g, grad_like(g, xd));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> exp(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::exp(x.data()));
  return unary("exp", x, std::move(out),
               [](const Tensor&, const Tensor& out) -> absl::StatusOr<Tensor> { return out; });
}

absl::StatusOr<Variable> log(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::log(x.data()));
  return unary("log", x, std::move(out),
               [](const Tensor& x, const Tensor&) { return ts::reciprocal(x); });
}

absl::StatusOr<Variable> sqrt(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::sqrt(x.data()));
  return unary("sqrt", x, std::move(out), [](const Tensor&, const Tensor& out) {
    return ts::div(Scalar(0.5), out);
  });
}

absl::StatusOr<Variable> square(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::square(x.data()));
  return unary("square", x, std::move(out),
               [](const Tensor& x, const Tensor&) { return ts::mul(x, 2.0); });
}

absl::StatusOr<Variable> abs(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::abs(x.data()));
  return unary("abs", x, std::move(out), [](const Tensor& x, const Tensor&) { return ts::sign(x); });
}

absl::StatusOr<Variable> tanh(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::tanh(x.data()));
  return unary("tanh", x, std::move(out), [](const Tensor&, const Tensor& out) -> absl::StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor sq, ts::square(out));
    return ts::sub(Scalar(1.0), sq);
  });
}

absl::StatusOr<Variable> sigmoid(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::sigmoid(x.data()));
  return unary("sigmoid", x, std::move(out), [](const Tensor&, const Tensor& out) -> absl::StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor one_minus, ts::sub(Scalar(1.0), out));
    return ts::mul(out, one_minus);
  });
}

absl::StatusOr<Variable> relu(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::relu(x.data()));
  const Tensor saved_out = out;
  return record("relu", {x}, std::move(out), [saved_out](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor positive, ts::gt(saved_out, 0));
    ASSIGN_OR_RETURN(Tensor g, ts::where(positive, ctx.grad(), Scalar(0)));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> gelu(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::gelu(x.data()));
  // d/dx x*Phi(x) = Phi(x) + x*phi(x).
  return unary("gelu", x, std::move(out), [](const Tensor& x, const Tensor&) -> absl::StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor scaled, ts::mul(x, std::numbers::sqrt2 / 2));
    ASSIGN_OR_RETURN(Tensor cdf, ts::erf(scaled));
    ASSIGN_OR_RETURN(cdf, ts::add(cdf, 1.0));
    ASSIGN_OR_RETURN(cdf, ts::mul(cdf, 0.5));
    ASSIGN_OR_RETURN(Tensor pdf, ts::square(x));
    ASSIGN_OR_RETURN(pdf, ts::mul(pdf, -0.5));
    ASSIGN_OR_RETURN(pdf, ts::exp(pdf));
    ASSIGN_OR_RETURN(pdf, ts::mul(pdf, std::numbers::inv_sqrtpi / std::numbers::sqrt2));
    ASSIGN_OR_RETURN(pdf, ts::mul(pdf, x));
    return ts::add(cdf, pdf);
  });
}

absl::StatusOr<Variable> clamp(const Variable& x, std::optional<Scalar> min,
                               std::optional<Scalar> max) {
  ASSIGN_OR_RETURN(Tensor out, ts::clamp(x.data(), min, max));
  const Tensor xd = x.data();
  return record("clamp", {x}, std::move(out), [xd, min, max](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor inside, ts::ones(xd.shape(), {DType::kBool, xd.device()}));
    if (min) {
      ASSIGN_OR_RETURN(Tensor ok, ts::ge(xd, *min));
      ASSIGN_OR_RETURN(inside, ts::logical_and(inside, ok));
    }
    if (max) {
      ASSIGN_OR_RETURN(Tensor ok, ts::le(xd, *max));
      ASSIGN_OR_RETURN(inside, ts::logical_and(inside, ok));
    }
    ASSIGN_OR_RETURN(Tensor g, ts::where(inside, ctx.grad(), Scalar(0)));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> where(const Tensor& cond, const Variable& a, const Variable& b) {
  ASSIGN_OR_RETURN(Tensor out, ts::where(cond, a.data(), b.data()));
  const Tensor ad = a.data(), bd = b.data();
  return record("where", {a, b}, std::move(out), [cond, ad, bd](const GradContext& ctx) -> Grads {
    std::vector<Tensor> grads(2);
    if (ctx.needs(0)) {
      ASSIGN_OR_RETURN(Tensor g, ts::where(cond, ctx.grad(), Scalar(0)));
      ASSIGN_OR_RETURN(grads[0], grad_like(g, ad));
    }
    if (ctx.needs(1)) {
      ASSIGN_OR_RETURN(Tensor g, ts::where(cond, Scalar(0), ctx.grad()));
      ASSIGN_OR_RETURN(grads[1], grad_like(g, bd));
    }
    return grads;
  });
}

absl::StatusOr<Variable> masked_fill(const Variable& x, const Tensor& mask, const Scalar& value) {
  ASSIGN_OR_RETURN(Tensor out, ts::masked_fill(x.data(), mask, value));
  const Tensor xd = x.data();
  return record("masked_fill", {x}, std::move(out), [xd, mask](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::masked_fill(ctx.grad(), mask, Scalar(0)));
    ASSIGN_OR_RETURN(g, grad_like(g, xd));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> to(const Variable& x, DType dtype) {
  ASSIGN_OR_RETURN(Tensor out, ts::to(x.data(), dtype));
  const DType from = x.dtype();
  return record("to", {x}, std::move(out), [from](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::to(ctx.grad(), from));
    return std::vector<Tensor>{g};
  });
}

}  // namespace ts::autograd
