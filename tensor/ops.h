// Every tensor op, as a free function (and the arithmetic operators). Each
// validates its inputs, computes its result's shape and dtype, and runs one
// kernel of the tensors' device (tensor/cpu or tensor/cuda; see backend.h).
// A misuse - operands on two devices, shapes that do not broadcast, a dtype
// the op does not take, an index out of range - throws ts::Error
// (base/error.h) whose message names the op and the operands' shapes and
// dtypes. Results are new, contiguous tensors unless the function says it
// returns a view, except that elementwise results (and clone, to, the
// *_like creators) keep a channels-last operand's layout
// (Tensor::suggest_memory_format), so a channels-last network stays so.
//
// Type rules follow PyTorch: binary ops promote (promote_types; a Scalar
// operand does not widen a tensor of its own category) with two differences:
// a 0-dim tensor operand promotes as any tensor does (f16[n] * f32[] is f32
// here, f16 in PyTorch), which the gradient clipping's f32 factor relies on;
// and pow of integers is f32 (PyTorch keeps int ** int an integer: 3 ** 20
// is 3486784401 there, 3486784512 here, past f32's 2^24). Other ops with
// real-valued results (div, exp, mean, softmax, ...) turn integer inputs
// into f32 as PyTorch does; f16/bf16 compute in f32 and round once at the
// end.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "tensor/dtype.h"
#include "tensor/op_kinds.h"
#include "tensor/operand.h"
#include "tensor/precision.h"
#include "tensor/random.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ts {

struct TensorOptions {
  DType dtype = DType::kF32;
  Device device = Device::cpu();
  // The layout of a created tensor; random ones draw their values in memory
  // order.
  MemoryFormat memory_format = MemoryFormat::kContiguous;
};

// ---- Creation.
Tensor empty(Dims shape, TensorOptions options = {});
Tensor zeros(Dims shape, TensorOptions options = {});
Tensor ones(Dims shape, TensorOptions options = {});
Tensor full(Dims shape, const Scalar& value, TensorOptions options = {});
// Same shape, dtype, device and layout as `like`.
Tensor zeros_like(const Tensor& like);
Tensor ones_like(const Tensor& like);
// [start, end) in steps of `step`, as PyTorch's arange.
Tensor arange(double start, double end, double step = 1, TensorOptions options = {});
// A tensor holding a copy of host values, in the dtype matching T.
template <typename T>
Tensor from_vector(absl::Span<const T> values, Dims shape, Device device = Device::cpu());
// A 0-dim tensor holding `value`.
Tensor scalar_tensor(const Scalar& value, TensorOptions options = {});
// Random tensors from a Generator (the default one when null): the same seed
// gives the same values on CPU and CUDA (normal: equal to within an ulp or two
// of the device's log/cos). Floating dtypes only.
Tensor rand(Dims shape, TensorOptions options = {}, Generator* generator = nullptr);
Tensor uniform(Dims shape, double low, double high, TensorOptions options = {}, Generator* generator = nullptr);
Tensor randn(Dims shape, TensorOptions options = {}, Generator* generator = nullptr);
Tensor normal(Dims shape, double mean, double stddev, TensorOptions options = {}, Generator* generator = nullptr);
// 1 with probability probs[i], else 0; same dtype and device as probs.
Tensor bernoulli(const Tensor& probs, Generator* generator = nullptr);
// 1 with probability p, else 0.
Tensor bernoulli(Dims shape, double p, TensorOptions options = {}, Generator* generator = nullptr);

// ---- Copies and conversion.
// Writes src (broadcast to dst's shape, converted to dst's dtype, from any
// device) into dst's memory; dst may be a strided view but must not overlap
// itself (no expanded dims).
void copy_(const Tensor& dst, const Tensor& src);
// Sets every element of dst (any view) to value.
void fill_(const Tensor& dst, const Scalar& value);
// A copy in x's layout when x is dense channels-last, else contiguous.
Tensor clone(const Tensor& x);
// x itself when dense in `format` and suggesting it; a view restrided to
// say `format` when x's memory is already in that order (a size-1 channel
// or spatial extent makes both layouts one order); else a copy in that
// layout.
Tensor contiguous(const Tensor& x, MemoryFormat format = MemoryFormat::kContiguous);
// x itself when nothing changes, else a converted copy (in x's layout, as
// clone).
Tensor to(const Tensor& x, DType dtype);
Tensor to(const Tensor& x, Device device);
// A view when the strides allow one, otherwise a contiguous copy.
Tensor reshape(const Tensor& x, Dims shape);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
// The elements as host values, converted to T, in row-major order.
template <typename T>
std::vector<T> to_vector(const Tensor& x);
// The single element of a one-element tensor, converted to T.
template <typename T>
T item(const Tensor& x);
// std::vector<bool> is bit-packed: bools are read through bytes.
template <>
std::vector<bool> to_vector<bool>(const Tensor& x);
template <>
bool item<bool>(const Tensor& x);

// ---- Elementwise: one function per row of op_table.h, named as the row:
// unary rows `Tensor name(const Tensor& x)`; binary rows broadcast and take a
// Scalar on either side, `Tensor name(a, b)` for (Tensor, Tensor),
// (Tensor, Scalar) and (Scalar, Tensor). Predicate rows return bool tensors.
#define TS_DECLARE_UNARY(name, Functor, rule) Tensor name(const Tensor& x);
TS_UNARY_OPS(TS_DECLARE_UNARY)
#undef TS_DECLARE_UNARY
#define TS_DECLARE_BINARY(name, Functor, rule)   \
  Tensor name(const Tensor& a, const Tensor& b); \
  Tensor name(const Tensor& a, const Scalar& b); \
  Tensor name(const Scalar& a, const Tensor& b);
TS_BINARY_OPS(TS_DECLARE_BINARY)
#undef TS_DECLARE_BINARY

// The same ops by enum (what the generated functions call).
Tensor unary(UnaryOp op, const Tensor& x);
Tensor binary(BinaryOp op, const Operand& a, const Operand& b);

// a + b, a - b, a * b, a / b, -x: add, sub, mul, div and neg.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& x);

// cond ? a : b elementwise, all three broadcast together; cond must be bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
// x with value where mask (bool, broadcastable to x) is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);
// Bounds x to [min, max]; either bound may be absent. NaN stays NaN. min >
// max is an error (PyTorch gives max everywhere). On an integer tensor, as
// PyTorch: an integer bound past its dtype's range on the side it cannot bind
// is dropped, one past the other side is an error.
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);

// ---- Gradients of the elementwise ops, for autograd: one fused kernel each.
// grad times the derivative of `op` at x (whose result was y); x or y may be
// undefined where grad_reads(op) says the gradient does not read it.
Tensor unary_grad(UnaryOp op, const Tensor& grad, const Tensor& x, const Tensor& y);
// The gradient with respect to operand `input` (0: a, 1: b) of y = op(a, b),
// at y's (broadcast) shape; y may be undefined unless grad_reads(op).output.
Tensor binary_grad(BinaryOp op, int input, const Tensor& grad, const Operand& a, const Operand& b, const Tensor& y);

// ---- Reductions over `dims` (empty: all dims), keeping them as size 1 when
// keepdim. f16/bf16 accumulate in f32; integer and bool sums give i64.
Tensor sum(const Tensor& x, Dims dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, Dims dims = {}, bool keepdim = false);
Tensor max(const Tensor& x, Dims dims = {}, bool keepdim = false);
Tensor min(const Tensor& x, Dims dims = {}, bool keepdim = false);
// Index (i64) of the first largest (smallest) element along dim; with no dim,
// into the flattened tensor. NaN counts as largest (smallest).
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Variance with `correction` subtracted from the count (1: unbiased); NaN
// when that leaves no degree of freedom (PyTorch: inf when values differ).
Tensor var(const Tensor& x, Dims dims = {}, int64_t correction = 1, bool keepdim = false);
// p-norm (p > 0, or infinity for the max-norm).
Tensor norm(const Tensor& x, double p = 2, Dims dims = {}, bool keepdim = false);
// grad summed over the dims that broadcasting expanded to reach it from
// `shape` (the reverse of expand).
Tensor sum_to_shape(const Tensor& grad, Dims shape);

// ---- Linear algebra. matmul follows torch.matmul: 1-D operands are
// vectors, batch dims broadcast. f32 on CUDA uses TF32 tensor cores when
// set_allow_tf32(true); f16/bf16 use tensor cores with f32 accumulation.
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- Softmax along one dim (accumulating in f32 for f16/bf16).
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// ---- Fused classification loss: log-softmax and negative log-likelihood in
// one pass over each row (nn::cross_entropy builds its reductions on these).
// For logits [N, C] and class indices target [N] (i32/i64), class weights w
// (weight [C]; all ones when undefined) and label smoothing s in [0, 1]:
//   loss[i] = (1 - s) * w[t_i] * (lse_i - x[i, t_i])
//             + s / C * sum_c w_c * (lse_i - x[i, c]),
//   row_weight[i] = w[t_i],
// both 0 where t_i == ignore_index, lse_i the row's log-sum-exp (kept for the
// gradient). loss, row_weight and logsumexp are f32 (f64 for f64 logits):
// rounding each row's loss to f16 would be off by up to 1e-3 of it. A target outside [0, C) is an error on the CPU; on
// CUDA, where checking it would stall the host on the device every step, its row's loss is NaN instead (and the trainer
// stops at a non-finite loss).
struct CrossEntropyRows {
  Tensor loss;
  Tensor row_weight;
  Tensor logsumexp;
};
CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, const Tensor& weight,
                                    int64_t ignore_index, double label_smoothing);
// The gradient of sum_i grad[i] * loss[i] with respect to the logits (grad
// [N]; one kernel, reading the logits and the saved logsumexp).
Tensor cross_entropy_rows_grad(const Tensor& grad, const Tensor& logits, const Tensor& target, const Tensor& weight,
                               const Tensor& logsumexp, int64_t ignore_index, double label_smoothing);

// ---- Joining and indexing. Index tensors are i32 or i64 and an index out of
// range is an error naming it.
Tensor cat(absl::Span<const Tensor> tensors, int64_t dim);
Tensor stack(absl::Span<const Tensor> tensors, int64_t dim);
// Slices of x along dim at the positions in the 1-D `index`.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// out[i][j] = x[index[i][j]][j] for dim 0 (and likewise for any dim); index
// has x's number of dims and no dim larger than x's except along `dim`.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// A copy of x with src[i][j] added at x[index[i][j]][j] for dim 0 (likewise
// for any dim); repeated indices accumulate.
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// i64 tensor of shape index.shape + [num_classes] with a 1 at each index.
Tensor one_hot(const Tensor& index, int64_t num_classes);

}  // namespace ts
