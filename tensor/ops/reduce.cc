// Reductions and softmax: the reduced dims are brought together (by a copy
// only when they are not already adjacent in a contiguous input) so every
// kernel sees an [outer, reduced, inner] block.
#include <cmath>
#include <limits>

#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts {
namespace {

struct Prepared {
  Tensor input;  // contiguous
  ReduceGeometry geometry;
};

// Arranges x so the dims in `mask` form the middle axis of a contiguous
// [outer, reduced, inner] view.
Prepared arrange(const Tensor& x, uint64_t mask) {
  int64_t first = -1, last = -1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (mask & (uint64_t{1} << d)) {
      if (first < 0) first = d;
      last = d;
    }
  }
  bool adjacent = true;
  for (int64_t d = first; d >= 0 && d <= last; ++d) adjacent = adjacent && (mask & (uint64_t{1} << d));
  if (first < 0) {  // nothing reduced (a 0-dim tensor)
    return Prepared{contiguous(x), {x.numel(), 1, 1}};
  }
  if (adjacent && x.is_contiguous()) {
    ReduceGeometry g;
    for (int64_t d = 0; d < first; ++d) g.outer *= x.shape()[d];
    for (int64_t d = first; d <= last; ++d) g.reduced *= x.shape()[d];
    for (int64_t d = last + 1; d < x.dim(); ++d) g.inner *= x.shape()[d];
    return Prepared{x, g};
  }
  // Kept dims first, reduced dims last: a row reduction over a dense copy.
  Shape order;
  ReduceGeometry g;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!(mask & (uint64_t{1} << d))) {
      order.push_back(d);
      g.outer *= x.shape()[d];
    }
  }
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (mask & (uint64_t{1} << d)) {
      order.push_back(d);
      g.reduced *= x.shape()[d];
    }
  }
  return Prepared{contiguous(x.permute(order)), g};
}

Shape reduced_shape(const Tensor& x, uint64_t mask, bool keepdim) {
  Shape shape;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!(mask & (uint64_t{1} << d))) {
      shape.push_back(x.shape()[d]);
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  return shape;
}

// The dtype a reduction computes in and returns.
DType result_dtype(ReduceOp op, DType in) {
  switch (op) {
    case ReduceOp::kSum:
      return is_floating(in) ? in : DType::kI64;
    case ReduceOp::kMax:
    case ReduceOp::kMin:
    case ReduceOp::kArgMax:
    case ReduceOp::kArgMin:
      TS_CHECK(in != DType::kBool, op_name(op), ": not supported for bool tensors");
      return op == ReduceOp::kArgMax || op == ReduceOp::kArgMin ? DType::kI64 : in;
    default:  // mean, var, norms: real-valued
      return to_floating(in);
  }
}

Tensor reduce_op(ReduceOp op, const Tensor& x, Dims dims, bool keepdim, double param) {
  const char* name = op_name(op);
  check_defined(name, x);
  const uint64_t mask = normalize_dim_mask(name, dims, x.dim());
  const DType out_dtype = result_dtype(op, x.dtype());
  // Kernels read the input in its own dtype except where the result needs a
  // wider one (integer sums read i64; real-valued results of integers, f32).
  const bool index_result = op == ReduceOp::kArgMax || op == ReduceOp::kArgMin;
  const Prepared p = arrange(to(x, index_result ? x.dtype() : out_dtype), mask);
  // Extrema have no identity; sums, means, variances and norms do (a norm's
  // accumulator of absolute values starts at 0).
  const bool has_identity = op != ReduceOp::kMax && op != ReduceOp::kMin && !index_result;
  TS_CHECK(p.geometry.reduced != 0 || has_identity, name, ": cannot reduce ", x.describe(), " over a dim of size zero");
  Tensor out = empty(reduced_shape(x, mask, keepdim), {out_dtype, x.device()});
  if (out.numel() > 0) backend_for(x.device()).reduce(op, p.input, p.geometry, param, out);
  return out;
}

Tensor arg_reduce(ReduceOp op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  check_defined(op_name(op), x);
  if (dim) return reduce_op(op, x, {*dim}, keepdim, 0);
  const Tensor index = reduce_op(op, reshape(x, {x.numel()}), {0}, false, 0);
  if (!keepdim) return index;
  return index.view(Shape(x.dim(), 1));
}

Tensor softmax_op(const Tensor& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_defined(name, x);
  const int64_t d = normalize_dim(name, dim, x.dim());
  const Tensor input = contiguous(to(x, to_floating(x.dtype())));
  ReduceGeometry g;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < d) g.outer *= x.shape()[i];
    if (i == d) g.reduced = x.shape()[i];
    if (i > d) g.inner *= x.shape()[i];
  }
  Tensor out = empty(x.shape(), {input.dtype(), x.device()});
  if (out.numel() > 0) backend_for(x.device()).softmax(input, g, log, out);
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, Dims dims, bool keepdim) { return reduce_op(ReduceOp::kSum, x, dims, keepdim, 0); }

Tensor mean(const Tensor& x, Dims dims, bool keepdim) { return reduce_op(ReduceOp::kMean, x, dims, keepdim, 0); }

Tensor max(const Tensor& x, Dims dims, bool keepdim) { return reduce_op(ReduceOp::kMax, x, dims, keepdim, 0); }

Tensor min(const Tensor& x, Dims dims, bool keepdim) { return reduce_op(ReduceOp::kMin, x, dims, keepdim, 0); }

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce(ReduceOp::kArgMax, x, dim, keepdim);
}

Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce(ReduceOp::kArgMin, x, dim, keepdim);
}

Tensor var(const Tensor& x, Dims dims, int64_t correction, bool keepdim) {
  TS_CHECK(correction >= 0, "var: correction must be >= 0, got ", correction);
  return reduce_op(ReduceOp::kVar, x, dims, keepdim, static_cast<double>(correction));
}

Tensor norm(const Tensor& x, double p, Dims dims, bool keepdim) {
  TS_CHECK(p > 0, "norm: p must be positive, got ", p);
  ReduceOp op = ReduceOp::kNormP;
  if (p == 1) op = ReduceOp::kNorm1;
  if (p == 2) op = ReduceOp::kNorm2;
  if (std::isinf(p)) op = ReduceOp::kNormInf;
  return reduce_op(op, x, dims, keepdim, p);
}

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_op(x, dim, false); }

Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_op(x, dim, true); }

Tensor sum_to_shape(const Tensor& grad, Dims shape) {
  check_defined("sum_to_shape", grad);
  if (Dims(grad.shape()) == shape) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  TS_CHECK(lead >= 0, "sum_to_shape: ", grad.describe(), " has fewer dims than ", shape_str(shape));
  Shape dims;
  for (int64_t i = 0; i < grad.dim(); ++i) {
    if (i < lead) {
      dims.push_back(i);
      continue;
    }
    const int64_t want = shape[i - lead];
    TS_CHECK(want == grad.size(i) || want == 1, "sum_to_shape: ", grad.describe(), " does not broadcast from ",
             shape_str(shape));
    if (want == 1 && grad.size(i) != 1) dims.push_back(i);
  }
  return reshape(sum(grad, dims, /*keepdim=*/true), shape);
}

}  // namespace ts
