// Backward of the shape ops: views route the gradient back to the place of
// the input it came from.
#include <utility>

#include "absl/strings/str_cat.h"
#include "autograd/function.h"
#include "autograd/ops/grad_utils.h"
#include "tensor/status_macros.h"

namespace ts::autograd {
namespace {

// Gradients that are the output's gradient in the input's shape.
absl::StatusOr<Variable> reshaped(const char* name, const Variable& x, Tensor out) {
  const Tensor xd = x.data();
  return record(name, {x}, std::move(out), [xd](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::reshape(ctx.grad(), xd.shape()));
    return std::vector<Tensor>{g};
  });
}

// A view taking part of x: the gradient is zero outside that part. `view`
// must pick the same part out of any tensor of x's shape.
using PartOf = std::function<absl::StatusOr<Tensor>(const Tensor&)>;

absl::StatusOr<Variable> part(const char* name, const Variable& x, PartOf view) {
  ASSIGN_OR_RETURN(Tensor out, view(x.data()));
  const Tensor xd = x.data();
  return record(name, {x}, std::move(out), [xd, view](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ts::zeros(xd.shape(), {ctx.grad().dtype(), xd.device()}));
    ASSIGN_OR_RETURN(Tensor window, view(g));
    RETURN_IF_ERROR(ts::copy_(window, ctx.grad()));
    return std::vector<Tensor>{g};
  });
}

}  // namespace

absl::StatusOr<Variable> reshape(const Variable& x, Dims shape) {
  ASSIGN_OR_RETURN(Tensor out, ts::reshape(x.data(), shape));
  return reshaped("reshape", x, std::move(out));
}

absl::StatusOr<Variable> flatten(const Variable& x, int64_t start_dim, int64_t end_dim) {
  ASSIGN_OR_RETURN(Tensor out, ts::flatten(x.data(), start_dim, end_dim));
  return reshaped("flatten", x, std::move(out));
}

absl::StatusOr<Variable> squeeze(const Variable& x, int64_t dim) {
  ASSIGN_OR_RETURN(Tensor out, x.data().squeeze(dim));
  return reshaped("squeeze", x, std::move(out));
}

absl::StatusOr<Variable> unsqueeze(const Variable& x, int64_t dim) {
  ASSIGN_OR_RETURN(Tensor out, x.data().unsqueeze(dim));
  return reshaped("unsqueeze", x, std::move(out));
}

absl::StatusOr<Variable> contiguous(const Variable& x) {
  ASSIGN_OR_RETURN(Tensor out, ts::contiguous(x.data()));
  return record("contiguous", {x}, std::move(out), [](const GradContext& ctx) -> Grads {
    return std::vector<Tensor>{ctx.grad()};
  });
}

absl::StatusOr<Variable> transpose(const Variable& x, int64_t dim0, int64_t dim1) {
  ASSIGN_OR_RETURN(Tensor out, x.data().transpose(dim0, dim1));
  return record("transpose", {x}, std::move(out), [dim0, dim1](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ctx.grad().transpose(dim0, dim1));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> permute(const Variable& x, Dims dims) {
  ASSIGN_OR_RETURN(Tensor out, x.data().permute(dims));
  // The inverse permutation; dims are valid here since permute accepted them.
  Shape inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i] < 0 ? dims[i] + x.dim() : dims[i];
    inverse[d] = static_cast<int64_t>(i);
  }
  return record("permute", {x}, std::move(out), [inverse](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, ctx.grad().permute(inverse));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> slice(const Variable& x, int64_t dim, int64_t start, int64_t end,
                               int64_t step) {
  return part("slice", x, [=](const Tensor& t) { return t.slice(dim, start, end, step); });
}

absl::StatusOr<Variable> narrow(const Variable& x, int64_t dim, int64_t start, int64_t length) {
  return part("narrow", x, [=](const Tensor& t) { return t.narrow(dim, start, length); });
}

absl::StatusOr<Variable> select(const Variable& x, int64_t dim, int64_t index) {
  return part("select", x, [=](const Tensor& t) { return t.select(dim, index); });
}

absl::StatusOr<Variable> expand(const Variable& x, Dims shape) {
  ASSIGN_OR_RETURN(Tensor out, x.data().expand(shape));
  const Tensor xd = x.data();
  return record("expand", {x}, std::move(out), [xd](const GradContext& ctx) -> Grads {
    ASSIGN_OR_RETURN(Tensor g, sum_to_shape(ctx.grad(), xd.shape()));
    return std::vector<Tensor>{g};
  });
}

absl::StatusOr<Variable> cat(absl::Span<const Variable> xs, int64_t dim) {
  std::vector<Tensor> values;
  for (const Variable& x : xs) values.push_back(x.data());
  ASSIGN_OR_RETURN(Tensor out, ts::cat(values, dim));
  ASSIGN_OR_RETURN(const int64_t d, normalize_dim("cat", dim, out.dim()));
  std::vector<int64_t> lengths;
  for (const Tensor& v : values) lengths.push_back(v.size(d));
  return record("cat", xs, std::move(out), [lengths, d](const GradContext& ctx) -> Grads {
    std::vector<Tensor> grads(lengths.size());
    int64_t start = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (ctx.needs(i)) {
      ASSIGN_OR_RETURN(grads[i], ctx.grad().narrow(d, start, lengths[i]));
    }
      start += lengths[i];
    }
    return grads;
  });
}

absl::StatusOr<Variable> stack(absl::Span<const Variable> xs, int64_t dim) {
  std::vector<Tensor> values;
  for (const Variable& x : xs) values.push_back(x.data());
  ASSIGN_OR_RETURN(Tensor out, ts::stack(values, dim));
  ASSIGN_OR_RETURN(const int64_t d, normalize_dim("stack", dim, out.dim()));
  const size_t n = xs.size();
  return record("stack", xs, std::move(out), [n, d](const GradContext& ctx) -> Grads {
    std::vector<Tensor> grads(n);
    for (size_t i = 0; i < n; ++i) {
      if (ctx.needs(i)) {
      ASSIGN_OR_RETURN(grads[i], ctx.grad().select(d, static_cast<int64_t>(i)));
    }
    }
    return grads;
  });
}

}  // namespace ts::autograd
