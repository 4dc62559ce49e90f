// Every tensor op, as a free function. Each validates its inputs (an error
// names the op and the shapes or dtypes at fault), computes its result's shape
// and dtype, and runs one kernel of the tensors' device (tensor/cpu or
// tensor/cuda; see backend.h). Inputs must be on one device. Results are new,
// contiguous tensors unless the function says it returns a view.
//
// Type rules follow PyTorch: binary ops promote (promote_types; a scalar
// operand does not widen a tensor of its own category); ops with real-valued
// results (div, pow, exp, mean, softmax, ...) turn integer inputs into f32;
// f16/bf16 compute in f32 and round once at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tensor/dtype.h"
#include "tensor/precision.h"
#include "tensor/random.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ts {

struct TensorOptions {
  DType dtype = DType::kF32;
  Device device = Device::cpu();
};

// ---- Creation.
absl::StatusOr<Tensor> empty(Dims shape, TensorOptions options = {});
absl::StatusOr<Tensor> zeros(Dims shape, TensorOptions options = {});
absl::StatusOr<Tensor> ones(Dims shape, TensorOptions options = {});
absl::StatusOr<Tensor> full(Dims shape, const Scalar& value, TensorOptions options = {});
// [start, end) in steps of `step`, as PyTorch's arange.
absl::StatusOr<Tensor> arange(double start, double end, double step = 1, TensorOptions options = {});
// A tensor holding a copy of host values, in the dtype matching T.
template <typename T>
absl::StatusOr<Tensor> from_vector(absl::Span<const T> values, Dims shape,
                                   Device device = Device::cpu());
// Random tensors from a Generator (the default one when null): the same seed
// gives the same values on CPU and CUDA (normal: equal to within an ulp or two
// of the device's log/cos). Floating dtypes only.
absl::StatusOr<Tensor> rand(Dims shape, TensorOptions options = {}, Generator* generator = nullptr);
absl::StatusOr<Tensor> uniform(Dims shape, double low, double high, TensorOptions options = {},
                               Generator* generator = nullptr);
absl::StatusOr<Tensor> randn(Dims shape, TensorOptions options = {}, Generator* generator = nullptr);
absl::StatusOr<Tensor> normal(Dims shape, double mean, double stddev, TensorOptions options = {},
                              Generator* generator = nullptr);
// 1 with probability probs[i], else 0; same dtype and device as probs.
absl::StatusOr<Tensor> bernoulli(const Tensor& probs, Generator* generator = nullptr);
// 1 with probability p, else 0.
absl::StatusOr<Tensor> bernoulli(Dims shape, double p, TensorOptions options = {},
                                 Generator* generator = nullptr);

// ---- Copies and conversion.
// Writes src (broadcast to dst's shape, converted to dst's dtype, from any
// device) into dst's memory; dst may be a strided view but must not overlap
// itself (no expanded dims).
absl::Status copy_(const Tensor& dst, const Tensor& src);
// Sets every element of dst (any view) to value.
absl::Status fill_(const Tensor& dst, const Scalar& value);
absl::StatusOr<Tensor> clone(const Tensor& x);
// x itself when already contiguous, else a contiguous copy.
absl::StatusOr<Tensor> contiguous(const Tensor& x);
// x itself when nothing changes, else a converted copy.
absl::StatusOr<Tensor> to(const Tensor& x, DType dtype);
absl::StatusOr<Tensor> to(const Tensor& x, Device device);
// A view when the strides allow one, otherwise a contiguous copy.
absl::StatusOr<Tensor> reshape(const Tensor& x, Dims shape);
absl::StatusOr<Tensor> flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
// The elements as host values, converted to T, in row-major order.
template <typename T>
absl::StatusOr<std::vector<T>> to_vector(const Tensor& x);
// The single element of a one-element tensor, converted to T.
template <typename T>
absl::StatusOr<T> item(const Tensor& x);
// std::vector<bool> is bit-packed: bools are read through bytes.
template <>
absl::StatusOr<std::vector<bool>> to_vector<bool>(const Tensor& x);
template <>
absl::StatusOr<bool> item<bool>(const Tensor& x);

// ---- Elementwise, unary.
absl::StatusOr<Tensor> neg(const Tensor& x);
absl::StatusOr<Tensor> abs(const Tensor& x);
absl::StatusOr<Tensor> sign(const Tensor& x);
absl::StatusOr<Tensor> square(const Tensor& x);
absl::StatusOr<Tensor> relu(const Tensor& x);
absl::StatusOr<Tensor> reciprocal(const Tensor& x);
absl::StatusOr<Tensor> exp(const Tensor& x);
absl::StatusOr<Tensor> log(const Tensor& x);
absl::StatusOr<Tensor> log1p(const Tensor& x);
absl::StatusOr<Tensor> expm1(const Tensor& x);
absl::StatusOr<Tensor> sqrt(const Tensor& x);
absl::StatusOr<Tensor> rsqrt(const Tensor& x);
absl::StatusOr<Tensor> sin(const Tensor& x);
absl::StatusOr<Tensor> cos(const Tensor& x);
absl::StatusOr<Tensor> tanh(const Tensor& x);
absl::StatusOr<Tensor> sigmoid(const Tensor& x);
absl::StatusOr<Tensor> gelu(const Tensor& x);  // exact (erf) form
absl::StatusOr<Tensor> erf(const Tensor& x);
absl::StatusOr<Tensor> floor(const Tensor& x);
absl::StatusOr<Tensor> ceil(const Tensor& x);
absl::StatusOr<Tensor> round(const Tensor& x);  // half to even
absl::StatusOr<Tensor> logical_not(const Tensor& x);
absl::StatusOr<Tensor> isnan(const Tensor& x);

// ---- Elementwise, binary, with broadcasting.
absl::StatusOr<Tensor> add(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> add(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> sub(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> sub(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> sub(const Scalar& a, const Tensor& b);
absl::StatusOr<Tensor> mul(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> mul(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> div(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> div(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> div(const Scalar& a, const Tensor& b);
absl::StatusOr<Tensor> pow(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> pow(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> maximum(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> minimum(const Tensor& a, const Tensor& b);
// Comparisons and logical ops give bool tensors.
absl::StatusOr<Tensor> eq(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> eq(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> ne(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> ne(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> lt(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> lt(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> le(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> le(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> gt(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> gt(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> ge(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> ge(const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> logical_and(const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> logical_or(const Tensor& a, const Tensor& b);

// cond ? a : b elementwise, all three broadcast together; cond must be bool.
absl::StatusOr<Tensor> where(const Tensor& cond, const Tensor& a, const Tensor& b);
absl::StatusOr<Tensor> where(const Tensor& cond, const Tensor& a, const Scalar& b);
absl::StatusOr<Tensor> where(const Tensor& cond, const Scalar& a, const Tensor& b);
// x with value where mask (bool, broadcastable to x) is true.
absl::StatusOr<Tensor> masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);
// Bounds x to [min, max]; either bound may be absent. NaN stays NaN.
absl::StatusOr<Tensor> clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);

// ---- Reductions over `dims` (empty: all dims), keeping them as size 1 when
// keepdim. f16/bf16 accumulate in f32; integer and bool sums give i64.
absl::StatusOr<Tensor> sum(const Tensor& x, Dims dims = {}, bool keepdim = false);
absl::StatusOr<Tensor> mean(const Tensor& x, Dims dims = {}, bool keepdim = false);
absl::StatusOr<Tensor> max(const Tensor& x, Dims dims = {}, bool keepdim = false);
absl::StatusOr<Tensor> min(const Tensor& x, Dims dims = {}, bool keepdim = false);
// Index (i64) of the first largest (smallest) element along dim; with no dim,
// into the flattened tensor. NaN counts as largest (smallest).
absl::StatusOr<Tensor> argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt,
                              bool keepdim = false);
absl::StatusOr<Tensor> argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt,
                              bool keepdim = false);
// Variance with `correction` subtracted from the count (1: unbiased).
absl::StatusOr<Tensor> var(const Tensor& x, Dims dims = {}, int64_t correction = 1,
                           bool keepdim = false);
// p-norm (p > 0, or infinity for the max-norm).
absl::StatusOr<Tensor> norm(const Tensor& x, double p = 2, Dims dims = {}, bool keepdim = false);

// ---- Linear algebra. matmul follows torch.matmul: 1-D operands are
// vectors, batch dims broadcast. f32 on CUDA uses TF32 tensor cores when
// set_allow_tf32(true); f16/bf16 use tensor cores with f32 accumulation.
absl::StatusOr<Tensor> matmul(const Tensor& a, const Tensor& b);

// ---- Softmax along one dim (accumulating in f32 for f16/bf16).
absl::StatusOr<Tensor> softmax(const Tensor& x, int64_t dim);
absl::StatusOr<Tensor> log_softmax(const Tensor& x, int64_t dim);

// ---- Joining and indexing. Index tensors are i32 or i64 and an index out of
// range is an error naming it.
absl::StatusOr<Tensor> cat(absl::Span<const Tensor> tensors, int64_t dim);
absl::StatusOr<Tensor> stack(absl::Span<const Tensor> tensors, int64_t dim);
// Slices of x along dim at the positions in the 1-D `index`.
absl::StatusOr<Tensor> index_select(const Tensor& x, int64_t dim, const Tensor& index);
// out[i][j] = x[index[i][j]][j] for dim 0 (and likewise for any dim); index
// has x's number of dims and no dim larger than x's except along `dim`.
absl::StatusOr<Tensor> gather(const Tensor& x, int64_t dim, const Tensor& index);
// A copy of x with src[i][j] added at x[index[i][j]][j] for dim 0 (likewise
// for any dim); repeated indices accumulate.
absl::StatusOr<Tensor> scatter_add(const Tensor& x, int64_t dim, const Tensor& index,
                                   const Tensor& src);
// i64 tensor of shape index.shape + [num_classes] with a 1 at each index.
absl::StatusOr<Tensor> one_hot(const Tensor& index, int64_t num_classes);

}  // namespace ts
