// Backward of the shape ops: views route the gradient back to the place of
// the input it came from.
#include <utility>

#include "autograd/function.h"
#include "autograd/ops/grad_utils.h"

namespace ts::autograd {
namespace {

// Gradients that are the output's gradient in the input's shape.
Variable reshaped(const char* name, const Variable& x, Tensor out) {
  const Tensor xd = x.data();
  return record(name, {x}, std::move(out),
                [xd](const GradContext& ctx) { return std::vector<Tensor>{ts::reshape(ctx.grad(), xd.shape())}; });
}

// A view taking part of x: the gradient is zero outside that part. `view`
// must pick the same part out of any tensor of x's shape.
using PartOf = std::function<Tensor(const Tensor&)>;

Variable part(const char* name, const Variable& x, PartOf view) {
  Tensor out = view(x.data());
  const Tensor xd = x.data();
  return record(name, {x}, std::move(out), [xd, view](const GradContext& ctx) {
    Tensor g = ts::zeros(xd.shape(), {ctx.grad().dtype(), xd.device()});
    ts::copy_(view(g), ctx.grad());
    return std::vector<Tensor>{g};
  });
}

}  // namespace

Variable reshape(const Variable& x, Dims shape) { return reshaped("reshape", x, ts::reshape(x.data(), shape)); }

Variable flatten(const Variable& x, int64_t start_dim, int64_t end_dim) {
  return reshaped("flatten", x, ts::flatten(x.data(), start_dim, end_dim));
}

Variable squeeze(const Variable& x, int64_t dim) { return reshaped("squeeze", x, x.data().squeeze(dim)); }

Variable unsqueeze(const Variable& x, int64_t dim) { return reshaped("unsqueeze", x, x.data().unsqueeze(dim)); }

Variable contiguous(const Variable& x) {
  Tensor out = ts::contiguous(x.data());
  return record("contiguous", {x}, std::move(out),
                [](const GradContext& ctx) { return std::vector<Tensor>{ctx.grad()}; });
}

Variable transpose(const Variable& x, int64_t dim0, int64_t dim1) {
  Tensor out = x.data().transpose(dim0, dim1);
  return record("transpose", {x}, std::move(out),
                [dim0, dim1](const GradContext& ctx) { return std::vector<Tensor>{ctx.grad().transpose(dim0, dim1)}; });
}

Variable permute(const Variable& x, Dims dims) {
  Tensor out = x.data().permute(dims);
  // The inverse permutation; dims are valid here since permute accepted them.
  Shape inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i] < 0 ? dims[i] + x.dim() : dims[i];
    inverse[d] = static_cast<int64_t>(i);
  }
  return record("permute", {x}, std::move(out),
                [inverse](const GradContext& ctx) { return std::vector<Tensor>{ctx.grad().permute(inverse)}; });
}

Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return part("slice", x, [=](const Tensor& t) { return t.slice(dim, start, end, step); });
}

Variable narrow(const Variable& x, int64_t dim, int64_t start, int64_t length) {
  return part("narrow", x, [=](const Tensor& t) { return t.narrow(dim, start, length); });
}

Variable select(const Variable& x, int64_t dim, int64_t index) {
  return part("select", x, [=](const Tensor& t) { return t.select(dim, index); });
}

Variable expand(const Variable& x, Dims shape) {
  Tensor out = x.data().expand(shape);
  const Tensor xd = x.data();
  return record("expand", {x}, std::move(out),
                [xd](const GradContext& ctx) { return std::vector<Tensor>{sum_to_shape(ctx.grad(), xd.shape())}; });
}

Variable cat(absl::Span<const Variable> xs, int64_t dim) {
  std::vector<Tensor> values;
  for (const Variable& x : xs) values.push_back(x.data());
  Tensor out = ts::cat(values, dim);
  const int64_t d = normalize_dim("cat", dim, out.dim());
  std::vector<int64_t> lengths;
  // The inputs may differ in dtype (cat promotes): each gets its gradient
  // back in its own.
  std::vector<DType> dtypes;
  for (const Tensor& v : values) {
    lengths.push_back(v.size(d));
    dtypes.push_back(v.dtype());
  }
  return record("cat", xs, std::move(out), [lengths, dtypes, d](const GradContext& ctx) {
    std::vector<Tensor> grads(lengths.size());
    int64_t start = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (ctx.needs(i)) grads[i] = ts::to(ctx.grad().narrow(d, start, lengths[i]), dtypes[i]);
      start += lengths[i];
    }
    return grads;
  });
}

Variable stack(absl::Span<const Variable> xs, int64_t dim) {
  std::vector<Tensor> values;
  for (const Variable& x : xs) values.push_back(x.data());
  Tensor out = ts::stack(values, dim);
  const int64_t d = normalize_dim("stack", dim, out.dim());
  std::vector<DType> dtypes;  // as cat's
  for (const Tensor& v : values) dtypes.push_back(v.dtype());
  return record("stack", xs, std::move(out), [dtypes, d](const GradContext& ctx) {
    std::vector<Tensor> grads(dtypes.size());
    for (size_t i = 0; i < dtypes.size(); ++i) {
      if (ctx.needs(i)) grads[i] = ts::to(ctx.grad().select(d, static_cast<int64_t>(i)), dtypes[i]);
    }
    return grads;
  });
}

}  // namespace ts::autograd
