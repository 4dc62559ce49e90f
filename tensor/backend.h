// The kernel interface each device implements once (tensor/cpu, tensor/cuda).
// Ops in tensor/ops.h validate their arguments, work out the result's shape
// and dtype, allocate it, and hand the computation to backend_for(device).
// Kernels may assume what the ops guarantee: operands are on the backend's
// device, already broadcast (expanded) to the output's shape and converted to
// the dtype the op computes in, and outputs are freshly allocated and
// contiguous unless a method says otherwise. A failure (a device error, a
// dtype no kernel exists for) throws ts::Error.
#pragma once

#include <cstdint>

#include "absl/types/span.h"
#include "tensor/op_kinds.h"
#include "tensor/operand.h"
#include "tensor/philox.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ts {

// A reduction viewed as [outer, reduced, inner] over a contiguous input: the
// reduced dims are consecutive after any permutation the op applied.
struct ReduceGeometry {
  int64_t outer = 1;
  int64_t reduced = 1;
  int64_t inner = 1;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // out = src converted to out's dtype; src has out's shape and any strides;
  // out may be any non-overlapping strided view (this is how views are
  // written: copy_, contiguous, to(dtype)).
  virtual void copy(const Tensor& src, const Tensor& out) = 0;
  // Copies the bytes of src into dst: both contiguous, one shape and dtype,
  // one on this backend's device and the other on the host. Returns once the
  // host side may be reused (device-to-host copies have completed).
  virtual void transfer(const Tensor& src, const Tensor& dst) = 0;
  // Every element of out (any strided view) set to value.
  virtual void fill(const Tensor& out, const Scalar& value) = 0;
  // out[i] = start + i * step.
  virtual void arange(const Tensor& out, double start, double step) = 0;
  // Counter-based random numbers into contiguous out: element i's value
  // depends only on (key, i), so CPU and CUDA agree. Uniform: [a, b); normal:
  // mean a, stddev b; Bernoulli: probability probs[i] (contiguous, out's
  // dtype) or, when probs is undefined, a.
  virtual void random(RandomKind kind, const Tensor& out, PhiloxKey key, double a, double b, const Tensor& probs) = 0;

  virtual void unary(UnaryOp op, const Tensor& a, const Tensor& out) = 0;
  // At most one operand is a scalar.
  virtual void binary(BinaryOp op, const Operand& a, const Operand& b, const Tensor& out) = 0;
  // out = cond ? a : b, cond of dtype bool.
  virtual void where(const Tensor& cond, const Operand& a, const Operand& b, const Tensor& out) = 0;
  // out = the op's gradient functor at (grad, x, y), all of out's floating
  // dtype; x and y are undefined where the gradient does not read them.
  virtual void unary_grad(UnaryOp op, const Tensor& grad, const Tensor& x, const Tensor& y, const Tensor& out) = 0;
  // out = gradient of y = op(a, b) with respect to operand `input`; a or b
  // may be scalars, y is undefined unless the gradient reads it.
  virtual void binary_grad(BinaryOp op, int input, const Tensor& grad, const Operand& a, const Operand& b,
                           const Tensor& y, const Tensor& out) = 0;

  // Reduces the `reduced` axis of a contiguous input; out holds outer*inner
  // elements. For kArgMax/kArgMin out is i64; for kVar `param` is the
  // correction (1: unbiased); for kNormP it is p. Sum and mean of f16/bf16
  // accumulate in f32.
  virtual void reduce(ReduceOp op, const Tensor& in, ReduceGeometry geometry, double param, const Tensor& out) = 0;

  // out[b] = a[b] @ b[b] for each of `batch` matrices (out: [batch, m, n]
  // contiguous). a and b are [batch, m, k] and [batch, k, n] views whose last
  // two dims may be transposed (one of their strides is 1) and whose batch
  // stride may be 0 (broadcast).
  virtual void matmul(const Tensor& a, const Tensor& b, const Tensor& out) = 0;

  // Softmax (or log-softmax) along the middle axis of a contiguous
  // [outer, dim, inner] input.
  virtual void softmax(const Tensor& in, ReduceGeometry geometry, bool log, const Tensor& out) = 0;

  // Cross-entropy of each row of contiguous logits [n, c] against contiguous
  // i64 target [n] (ts::cross_entropy_rows). weight [c] and its 0-dim sum
  // weight_sum are undefined for unweighted classes (weight_sum also when
  // label_smoothing is 0); they, loss, row_weight, logsumexp and grad are of
  // the compute dtype (f32, or f64 for f64 logits), out of the logits'.
  virtual void cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& weight_sum,
                             int64_t ignore_index, double label_smoothing, const Tensor& loss, const Tensor& row_weight,
                             const Tensor& logsumexp) = 0;
  virtual void cross_entropy_grad(const Tensor& grad, const Tensor& logits, const Tensor& target, const Tensor& weight,
                                  const Tensor& weight_sum, const Tensor& logsumexp, int64_t ignore_index,
                                  double label_smoothing, const Tensor& out) = 0;

  // Copies each input into out along `dim` (inputs contiguous, out contiguous).
  virtual void cat(absl::Span<const Tensor> inputs, int64_t dim, const Tensor& out) = 0;
  // Index tensors are contiguous i64 with values already checked to be in range.
  virtual void index_select(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) = 0;
  virtual void gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) = 0;
  // out[..index[i]..] += src[i], in place on out (contiguous).
  virtual void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) = 0;
};

Backend& backend_for(Device device);

}  // namespace ts
