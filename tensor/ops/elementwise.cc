// Elementwise ops: dtype promotion, broadcasting, then one backend kernel.
#include "absl/strings/str_cat.h"
#include "tensor/backend.h"
#include "tensor/ops.h"
#include "tensor/ops/checks.h"
#include "tensor/status_macros.h"

namespace ts {
namespace {

using ops_internal::check_defined;
using ops_internal::check_same_device;

absl::Status bool_unsupported(const char* op) {
  return absl::InvalidArgumentError(absl::StrCat(op, ": not supported for bool tensors"));
}

// An operand converted to `dtype` and broadcast to `shape`.
absl::StatusOr<Operand> prepare(const Operand& x, DType dtype, Dims shape) {
  if (x.is_scalar()) return x;
  ASSIGN_OR_RETURN(Tensor converted, to(x.tensor, dtype));
  ASSIGN_OR_RETURN(Tensor expanded, converted.expand(shape));
  return Operand{expanded, {}};
}

absl::StatusOr<Tensor> unary_op(UnaryOp op, const Tensor& x) {
  RETURN_IF_ERROR(check_defined(op_name(op), x));
  DType compute = x.dtype();
  if (is_float_only(op)) compute = to_floating(compute);
  if (!returns_bool(op) && compute == DType::kBool) return bool_unsupported(op_name(op));
  ASSIGN_OR_RETURN(Tensor input, to(x, compute));
  ASSIGN_OR_RETURN(Tensor out,
                   empty(x.shape(), {returns_bool(op) ? DType::kBool : compute, x.device()}));
  if (out.numel() > 0) RETURN_IF_ERROR(backend_for(out.device()).unary(op, input, out));
  return out;
}

// Result dtype of two operands (at most one scalar) before op-specific rules.
DType promoted(const Operand& a, const Operand& b) {
  if (a.is_scalar()) return promote_with_scalar(b.tensor.dtype(), a.scalar);
  if (b.is_scalar()) return promote_with_scalar(a.tensor.dtype(), b.scalar);
  return promote_types(a.tensor.dtype(), b.tensor.dtype());
}

Dims shape_of(const Operand& x) { return x.is_scalar() ? Dims() : Dims(x.tensor.shape()); }

absl::StatusOr<Tensor> binary_op(BinaryOp op, const Operand& a, const Operand& b) {
  const char* name = op_name(op);
  std::vector<const Tensor*> tensors;
  for (const Operand* x : {&a, &b}) {
    if (!x->is_scalar()) tensors.push_back(&x->tensor);
  }
  RETURN_IF_ERROR(check_same_device(name, tensors));
  DType compute = promoted(a, b);
  if (is_float_only(op)) compute = to_floating(compute);
  if (!returns_bool(op) && compute == DType::kBool) return bool_unsupported(name);
  ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(name, shape_of(a), shape_of(b)));
  ASSIGN_OR_RETURN(Operand pa, prepare(a, compute, shape));
  ASSIGN_OR_RETURN(Operand pb, prepare(b, compute, shape));
  const Device device = tensors[0]->device();
  ASSIGN_OR_RETURN(Tensor out, empty(shape, {returns_bool(op) ? DType::kBool : compute, device}));
  if (out.numel() > 0) RETURN_IF_ERROR(backend_for(device).binary(op, pa, pb, out));
  return out;
}

Operand T(const Tensor& t) { return Operand{t, {}}; }
Operand S(const Scalar& s) { return Operand{Tensor(), s}; }

// `dtype` is the result's dtype; operands are converted to it.
absl::StatusOr<Tensor> where_op(const Tensor& cond, const Operand& a, const Operand& b, DType dtype) {
  std::vector<const Tensor*> tensors = {&cond};
  for (const Operand* x : {&a, &b}) {
    if (!x->is_scalar()) tensors.push_back(&x->tensor);
  }
  RETURN_IF_ERROR(check_same_device("where", tensors));
  if (cond.dtype() != DType::kBool) {
    return absl::InvalidArgumentError(absl::StrCat("where: condition must be bool, got ", cond.describe()));
  }
  ASSIGN_OR_RETURN(Shape ab_shape, broadcast_shapes("where", shape_of(a), shape_of(b)));
  ASSIGN_OR_RETURN(Shape shape, broadcast_shapes("where", cond.shape(), ab_shape));
  ASSIGN_OR_RETURN(Tensor c, cond.expand(shape));
  ASSIGN_OR_RETURN(Operand pa, prepare(a, dtype, shape));
  ASSIGN_OR_RETURN(Operand pb, prepare(b, dtype, shape));
  ASSIGN_OR_RETURN(Tensor out, empty(shape, {dtype, cond.device()}));
  if (out.numel() > 0) RETURN_IF_ERROR(backend_for(out.device()).where(c, pa, pb, out));
  return out;
}

}  // namespace

absl::StatusOr<Tensor> neg(const Tensor& x) { return unary_op(UnaryOp::kNeg, x); }
absl::StatusOr<Tensor> abs(const Tensor& x) { return unary_op(UnaryOp::kAbs, x); }
absl::StatusOr<Tensor> sign(const Tensor& x) { return unary_op(UnaryOp::kSign, x); }
absl::StatusOr<Tensor> square(const Tensor& x) { return unary_op(UnaryOp::kSquare, x); }
absl::StatusOr<Tensor> relu(const Tensor& x) { return unary_op(UnaryOp::kRelu, x); }
absl::StatusOr<Tensor> reciprocal(const Tensor& x) { return unary_op(UnaryOp::kReciprocal, x); }
absl::StatusOr<Tensor> exp(const Tensor& x) { return unary_op(UnaryOp::kExp, x); }
absl::StatusOr<Tensor> log(const Tensor& x) { return unary_op(UnaryOp::kLog, x); }
absl::StatusOr<Tensor> log1p(const Tensor& x) { return unary_op(UnaryOp::kLog1p, x); }
absl::StatusOr<Tensor> expm1(const Tensor& x) { return unary_op(UnaryOp::kExpm1, x); }
absl::StatusOr<Tensor> sqrt(const Tensor& x) { return unary_op(UnaryOp::kSqrt, x); }
absl::StatusOr<Tensor> rsqrt(const Tensor& x) { return unary_op(UnaryOp::kRsqrt, x); }
absl::StatusOr<Tensor> sin(const Tensor& x) { return unary_op(UnaryOp::kSin, x); }
absl::StatusOr<Tensor> cos(const Tensor& x) { return unary_op(UnaryOp::kCos, x); }
absl::StatusOr<Tensor> tanh(const Tensor& x) { return unary_op(UnaryOp::kTanh, x); }
absl::StatusOr<Tensor> sigmoid(const Tensor& x) { return unary_op(UnaryOp::kSigmoid, x); }
absl::StatusOr<Tensor> gelu(const Tensor& x) { return unary_op(UnaryOp::kGelu, x); }
absl::StatusOr<Tensor> erf(const Tensor& x) { return unary_op(UnaryOp::kErf, x); }
absl::StatusOr<Tensor> floor(const Tensor& x) { return unary_op(UnaryOp::kFloor, x); }
absl::StatusOr<Tensor> ceil(const Tensor& x) { return unary_op(UnaryOp::kCeil, x); }
absl::StatusOr<Tensor> round(const Tensor& x) { return unary_op(UnaryOp::kRound, x); }
absl::StatusOr<Tensor> logical_not(const Tensor& x) { return unary_op(UnaryOp::kLogicalNot, x); }
absl::StatusOr<Tensor> isnan(const Tensor& x) { return unary_op(UnaryOp::kIsNan, x); }

absl::StatusOr<Tensor> add(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kAdd, T(a), T(b)); }
absl::StatusOr<Tensor> add(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kAdd, T(a), S(b)); }
absl::StatusOr<Tensor> sub(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kSub, T(a), T(b)); }
absl::StatusOr<Tensor> sub(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kSub, T(a), S(b)); }
absl::StatusOr<Tensor> sub(const Scalar& a, const Tensor& b) { return binary_op(BinaryOp::kSub, S(a), T(b)); }
absl::StatusOr<Tensor> mul(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kMul, T(a), T(b)); }
absl::StatusOr<Tensor> mul(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kMul, T(a), S(b)); }
absl::StatusOr<Tensor> div(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kDiv, T(a), T(b)); }
absl::StatusOr<Tensor> div(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kDiv, T(a), S(b)); }
absl::StatusOr<Tensor> div(const Scalar& a, const Tensor& b) { return binary_op(BinaryOp::kDiv, S(a), T(b)); }
absl::StatusOr<Tensor> pow(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kPow, T(a), T(b)); }
absl::StatusOr<Tensor> pow(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kPow, T(a), S(b)); }
absl::StatusOr<Tensor> maximum(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kMaximum, T(a), T(b)); }
absl::StatusOr<Tensor> minimum(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kMinimum, T(a), T(b)); }
absl::StatusOr<Tensor> eq(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kEq, T(a), T(b)); }
absl::StatusOr<Tensor> eq(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kEq, T(a), S(b)); }
absl::StatusOr<Tensor> ne(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kNe, T(a), T(b)); }
absl::StatusOr<Tensor> ne(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kNe, T(a), S(b)); }
absl::StatusOr<Tensor> lt(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kLt, T(a), T(b)); }
absl::StatusOr<Tensor> lt(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kLt, T(a), S(b)); }
absl::StatusOr<Tensor> le(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kLe, T(a), T(b)); }
absl::StatusOr<Tensor> le(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kLe, T(a), S(b)); }
absl::StatusOr<Tensor> gt(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kGt, T(a), T(b)); }
absl::StatusOr<Tensor> gt(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kGt, T(a), S(b)); }
absl::StatusOr<Tensor> ge(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kGe, T(a), T(b)); }
absl::StatusOr<Tensor> ge(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::kGe, T(a), S(b)); }
absl::StatusOr<Tensor> logical_and(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kLogicalAnd, T(a), T(b)); }
absl::StatusOr<Tensor> logical_or(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::kLogicalOr, T(a), T(b)); }

absl::StatusOr<Tensor> where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  RETURN_IF_ERROR(check_same_device("where", {&cond, &a, &b}));
  return where_op(cond, T(a), T(b), promote_types(a.dtype(), b.dtype()));
}
absl::StatusOr<Tensor> where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  RETURN_IF_ERROR(check_same_device("where", {&cond, &a}));
  return where_op(cond, T(a), S(b), promote_with_scalar(a.dtype(), b));
}
absl::StatusOr<Tensor> where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  RETURN_IF_ERROR(check_same_device("where", {&cond, &b}));
  return where_op(cond, S(a), T(b), promote_with_scalar(b.dtype(), a));
}

absl::StatusOr<Tensor> masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  RETURN_IF_ERROR(check_same_device("masked_fill", {&x, &mask}));
  ASSIGN_OR_RETURN(Shape shape, broadcast_shapes("masked_fill", x.shape(), mask.shape()));
  if (shape != x.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("masked_fill: mask ", mask.describe(),
                                                   " would broadcast ", x.describe(), " to ", shape_str(shape)));
  }
  // The value takes x's dtype, whatever its own kind.
  return where_op(mask, S(value), T(x), x.dtype());
}

absl::StatusOr<Tensor> clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  RETURN_IF_ERROR(check_defined("clamp", x));
  if (!min && !max) return absl::InvalidArgumentError("clamp: needs a min or a max");
  if (min && max && min->to_double() > max->to_double()) {
    return absl::InvalidArgumentError(absl::StrCat("clamp: min ", min->to_string(), " exceeds max ",
                                                   max->to_string()));
  }
  Tensor result = x;
  if (min) {
    ASSIGN_OR_RETURN(result, binary_op(BinaryOp::kMaximum, T(result), S(*min)));
  }
  if (max) {
    ASSIGN_OR_RETURN(result, binary_op(BinaryOp::kMinimum, T(result), S(*max)));
  }
  return result;
}

}  // namespace ts
