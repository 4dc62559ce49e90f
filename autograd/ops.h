// Differentiable ops on Variables. Each computes its value with the tensor op
// of the same name (tensor/ops.h: same type, broadcasting and error rules)
// and records its backward. Gradients of broadcast operands are summed back
// to the operand's shape.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "autograd/variable.h"
#include "tensor/ops.h"

namespace ts::autograd {

// ---- Elementwise.
absl::StatusOr<Variable> add(const Variable& a, const Variable& b);
absl::StatusOr<Variable> add(const Variable& a, const Scalar& b);
absl::StatusOr<Variable> sub(const Variable& a, const Variable& b);
absl::StatusOr<Variable> sub(const Variable& a, const Scalar& b);
absl::StatusOr<Variable> sub(const Scalar& a, const Variable& b);
absl::StatusOr<Variable> mul(const Variable& a, const Variable& b);
absl::StatusOr<Variable> mul(const Variable& a, const Scalar& b);
absl::StatusOr<Variable> div(const Variable& a, const Variable& b);
absl::StatusOr<Variable> div(const Variable& a, const Scalar& b);
absl::StatusOr<Variable> pow(const Variable& x, const Scalar& exponent);
absl::StatusOr<Variable> neg(const Variable& x);
absl::StatusOr<Variable> exp(const Variable& x);
absl::StatusOr<Variable> log(const Variable& x);
absl::StatusOr<Variable> sqrt(const Variable& x);
absl::StatusOr<Variable> square(const Variable& x);
absl::StatusOr<Variable> abs(const Variable& x);
absl::StatusOr<Variable> tanh(const Variable& x);
absl::StatusOr<Variable> sigmoid(const Variable& x);
absl::StatusOr<Variable> relu(const Variable& x);
absl::StatusOr<Variable> gelu(const Variable& x);  // exact (erf) form
// The gradient flows where min <= x <= max, as in PyTorch.
absl::StatusOr<Variable> clamp(const Variable& x, std::optional<Scalar> min,
                               std::optional<Scalar> max);
absl::StatusOr<Variable> where(const Tensor& cond, const Variable& a, const Variable& b);
absl::StatusOr<Variable> masked_fill(const Variable& x, const Tensor& mask, const Scalar& value);
// Cast; the gradient is cast back to x's dtype.
absl::StatusOr<Variable> to(const Variable& x, DType dtype);

// ---- Reductions over `dims` (empty: all).
absl::StatusOr<Variable> sum(const Variable& x, Dims dims = {}, bool keepdim = false);
absl::StatusOr<Variable> mean(const Variable& x, Dims dims = {}, bool keepdim = false);

// ---- Linear algebra (torch.matmul semantics).
absl::StatusOr<Variable> matmul(const Variable& a, const Variable& b);

// ---- Softmax.
absl::StatusOr<Variable> softmax(const Variable& x, int64_t dim);
absl::StatusOr<Variable> log_softmax(const Variable& x, int64_t dim);

// ---- Shape. Views of the value where the tensor op gives one.
absl::StatusOr<Variable> reshape(const Variable& x, Dims shape);
absl::StatusOr<Variable> flatten(const Variable& x, int64_t start_dim = 0, int64_t end_dim = -1);
absl::StatusOr<Variable> transpose(const Variable& x, int64_t dim0, int64_t dim1);
absl::StatusOr<Variable> permute(const Variable& x, Dims dims);
absl::StatusOr<Variable> slice(const Variable& x, int64_t dim, int64_t start, int64_t end,
                               int64_t step = 1);
absl::StatusOr<Variable> narrow(const Variable& x, int64_t dim, int64_t start, int64_t length);
absl::StatusOr<Variable> select(const Variable& x, int64_t dim, int64_t index);
absl::StatusOr<Variable> expand(const Variable& x, Dims shape);
absl::StatusOr<Variable> squeeze(const Variable& x, int64_t dim);
absl::StatusOr<Variable> unsqueeze(const Variable& x, int64_t dim);
absl::StatusOr<Variable> contiguous(const Variable& x);
absl::StatusOr<Variable> cat(absl::Span<const Variable> xs, int64_t dim);
absl::StatusOr<Variable> stack(absl::Span<const Variable> xs, int64_t dim);

// ---- Indexing (index tensors carry no gradient).
absl::StatusOr<Variable> index_select(const Variable& x, int64_t dim, const Tensor& index);
absl::StatusOr<Variable> gather(const Variable& x, int64_t dim, const Tensor& index);

// Sums `grad` over the dims that broadcasting expanded, giving `shape`.
absl::StatusOr<Tensor> sum_to_shape(const Tensor& grad, Dims shape);

}  // namespace ts::autograd
