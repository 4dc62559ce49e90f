// Elementwise ops: dtype rules, broadcasting, then one backend kernel. The
// named functions are generated from op_table.h.
#include <initializer_list>
#include <limits>
#include <optional>
#include <type_traits>

#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/checks.h"
#include "tensor/dtype_dispatch.h"
#include "tensor/ops.h"

namespace ts {
namespace {

// An operand converted to `dtype` and broadcast to `shape`. A scalar stays
// as it is (arithmetic takes it in f32 and rounds only the result, as
// PyTorch's op math does), except that a comparison sees it as an f16 or
// bf16 tensor holds it, as PyTorch's comparisons do: f16 0.1 == 0.1 is true,
// and 0.0999755859 == 0.1 in f32 was not.
Operand prepare(const Operand& x, DType dtype, Dims shape, DTypeRule rule = DTypeRule::kNumeric) {
  if (!x.is_scalar()) return to(x.tensor, dtype).expand(shape);
  if (rule != DTypeRule::kPredicate || !is_reduced_float(dtype)) return x;
  const double held =
      dtype == DType::kF16 ? static_cast<float>(x.scalar.to<Half>()) : static_cast<float>(x.scalar.to<BFloat16>());
  return Scalar(held);
}

// The dtype an op with `rule` computes in, from its operands' promoted dtype.
DType compute_dtype(const char* op, DTypeRule rule, DType promoted) {
  if (rule == DTypeRule::kFloating) return to_floating(promoted);
  TS_CHECK(rule == DTypeRule::kPredicate || promoted != DType::kBool, op, ": not supported for bool tensors");
  return promoted;
}

DType result_dtype(DTypeRule rule, DType compute) { return rule == DTypeRule::kPredicate ? DType::kBool : compute; }

// Result dtype of two operands (at most one scalar) before op-specific rules.
DType promoted(const Operand& a, const Operand& b) {
  if (a.is_scalar()) return promote_with_scalar(b.tensor.dtype(), a.scalar);
  if (b.is_scalar()) return promote_with_scalar(a.tensor.dtype(), b.scalar);
  return promote_types(a.tensor.dtype(), b.tensor.dtype());
}

Dims shape_of(const Operand& x) { return x.is_scalar() ? Dims() : Dims(x.tensor.shape()); }

// The layout of a result of `shape`: that of the first tensor operand of the
// result's own shape (one broadcast into it does not decide), so
// channels-last activations keep their layout through the ops between
// convolutions.
MemoryFormat result_format(Dims shape, std::initializer_list<const Operand*> operands) {
  for (const Operand* x : operands) {
    if (!x->is_scalar() && Dims(x->tensor.shape()) == shape) return x->tensor.suggest_memory_format();
  }
  return MemoryFormat::kContiguous;
}

// The tensor operands of a binary op, checked to share a device.
const Tensor& first_tensor(const char* op, const Operand& a, const Operand& b) {
  TS_CHECK(!a.is_scalar() || !b.is_scalar(), op, ": needs a tensor operand");
  if (a.is_scalar()) {
    check_defined(op, b.tensor);
    return b.tensor;
  }
  if (b.is_scalar()) {
    check_defined(op, a.tensor);
    return a.tensor;
  }
  check_same_device(op, {&a.tensor, &b.tensor});
  return a.tensor;
}

// `dtype` is the result's dtype; operands are converted to it.
Tensor where_op(const Tensor& cond, const Operand& a, const Operand& b, DType dtype) {
  for (const Operand* x : {&a, &b}) {
    if (!x->is_scalar()) check_same_device("where", {&cond, &x->tensor});
  }
  TS_CHECK(cond.dtype() == DType::kBool, "where: condition must be bool, got ", cond.describe());
  const Shape shape = broadcast_shapes("where", cond.shape(), broadcast_shapes("where", shape_of(a), shape_of(b)));
  Tensor out = empty(shape, {dtype, cond.device(), result_format(shape, {&a, &b})});
  if (out.numel() > 0) {
    backend_for(out.device()).where(cond.expand(shape), prepare(a, dtype, shape), prepare(b, dtype, shape), out);
  }
  return out;
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x) {
  const char* name = op_name(op);
  check_defined(name, x);
  const DTypeRule rule = dtype_rule(op);
  const DType compute = compute_dtype(name, rule, x.dtype());
  const Tensor input = to(x, compute);
  Tensor out = empty(x.shape(), {result_dtype(rule, compute), x.device(), x.suggest_memory_format()});
  if (out.numel() > 0) backend_for(out.device()).unary(op, input, out);
  return out;
}

Tensor binary(BinaryOp op, const Operand& a, const Operand& b) {
  const char* name = op_name(op);
  const Device device = first_tensor(name, a, b).device();
  const DTypeRule rule = dtype_rule(op);
  const DType compute = compute_dtype(name, rule, promoted(a, b));
  const Shape shape = broadcast_shapes(name, shape_of(a), shape_of(b));
  Tensor out = empty(shape, {result_dtype(rule, compute), device, result_format(shape, {&a, &b})});
  if (out.numel() > 0) {
    backend_for(device).binary(op, prepare(a, compute, shape, rule), prepare(b, compute, shape, rule), out);
  }
  return out;
}

#define TS_DEFINE_UNARY(name, Functor, rule) \
  Tensor name(const Tensor& x) { return unary(UnaryOp::k##Functor, x); }
TS_UNARY_OPS(TS_DEFINE_UNARY)
#undef TS_DEFINE_UNARY

#define TS_DEFINE_BINARY(name, Functor, rule)                                                  \
  Tensor name(const Tensor& a, const Tensor& b) { return binary(BinaryOp::k##Functor, a, b); } \
  Tensor name(const Tensor& a, const Scalar& b) { return binary(BinaryOp::k##Functor, a, b); } \
  Tensor name(const Scalar& a, const Tensor& b) { return binary(BinaryOp::k##Functor, a, b); }
TS_BINARY_OPS(TS_DEFINE_BINARY)
#undef TS_DEFINE_BINARY

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }

Tensor unary_grad(UnaryOp op, const Tensor& grad, const Tensor& x, const Tensor& y) {
  const char* name = op_name(op);
  TS_CHECK(dtype_rule(op) != DTypeRule::kPredicate, name, " has no gradient");
  check_floating(name, grad);
  const GradReads reads = grad_reads(op);
  // The saved values in the gradient's dtype and shape (x may be an integer
  // tensor the forward converted; grad has y's dtype).
  auto operand = [&](bool read, const Tensor& t) {
    if (!read) return Tensor();
    check_same_device(name, {&grad, &t});
    TS_CHECK(t.shape() == grad.shape(), name, " gradient: ", t.describe(), " does not match the gradient ",
             grad.describe());
    return to(t, grad.dtype());
  };
  const Tensor xin = operand(reads.input, x), yin = operand(reads.output, y);
  Tensor out = empty(grad.shape(), {grad.dtype(), grad.device(), grad.suggest_memory_format()});
  if (out.numel() > 0) backend_for(out.device()).unary_grad(op, grad, xin, yin, out);
  return out;
}

Tensor binary_grad(BinaryOp op, int input, const Tensor& grad, const Operand& a, const Operand& b, const Tensor& y) {
  const char* name = op_name(op);
  TS_CHECK(dtype_rule(op) != DTypeRule::kPredicate, name, " has no gradient");
  TS_CHECK(input == 0 || input == 1, name, " gradient: operand ", input, " of two");
  check_floating(name, grad);
  if (grad_is_identity(op, input)) return grad;
  const Shape& shape = grad.shape();
  const GradReads reads = grad_reads(op);
  const Operand pa = reads.input ? prepare(a, grad.dtype(), shape) : Operand(Scalar(0));
  const Operand pb = reads.input ? prepare(b, grad.dtype(), shape) : Operand(Scalar(0));
  const Tensor py = reads.output ? to(y, grad.dtype()).expand(shape) : Tensor();
  Tensor out = empty(shape, {grad.dtype(), grad.device(), grad.suggest_memory_format()});
  if (out.numel() > 0) backend_for(out.device()).binary_grad(op, input, grad, pa, pb, py, out);
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same_device("where", {&cond, &a, &b});
  return where_op(cond, a, b, promote_types(a.dtype(), b.dtype()));
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  check_same_device("where", {&cond, &a});
  const DType dtype = promote_with_scalar(a.dtype(), b);
  check_storable("where", b, dtype);
  return where_op(cond, a, b, dtype);
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  check_same_device("where", {&cond, &b});
  const DType dtype = promote_with_scalar(b.dtype(), a);
  check_storable("where", a, dtype);
  return where_op(cond, a, b, dtype);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  check_same_device("masked_fill", {&x, &mask});
  const Shape shape = broadcast_shapes("masked_fill", x.shape(), mask.shape());
  TS_CHECK(shape == x.shape(), "masked_fill: mask ", mask.describe(), " would broadcast ", x.describe(), " to ",
           shape_str(shape));
  // The value takes x's dtype, whatever its own kind.
  check_storable("masked_fill", value, x.dtype());
  return where_op(mask, value, x, x.dtype());
}

namespace {

// An integer bound past an integer tensor's range would wrap when the
// kernel stores it in the tensor's dtype (u8 max 256 clamping to 0). As
// PyTorch does: a bound on the side it cannot bind (max above the range, min
// below it) is dropped, and one past the other side is an error. A floating
// bound makes the result floating, where every bound fits.
void fit_integer_bounds(DType dtype, std::optional<Scalar>& min, std::optional<Scalar>& max) {
  if ((min && min->is_floating()) || (max && max->is_floating())) return;
  visit_dtype_as<Half, BFloat16>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // In long double, which holds every int64 and the bounds exactly.
      constexpr long double lowest = std::numeric_limits<T>::lowest(), highest = std::numeric_limits<T>::max();
      const auto value = [](const Scalar& s) { return static_cast<long double>(s.to_int64()); };
      if (min && value(*min) < lowest) min.reset();
      if (max && value(*max) > highest) max.reset();
      TS_CHECK(!min || value(*min) <= highest, "clamp: min ", min->to_string(), " is above the range of ",
               dtype_name(dtype));
      TS_CHECK(!max || value(*max) >= lowest, "clamp: max ", max->to_string(), " is below the range of ",
               dtype_name(dtype));
    }
  });
}

}  // namespace

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  check_defined("clamp", x);
  TS_CHECK(min || max, "clamp: needs a min or a max");
  // Integers compared as integers: as doubles, INT64_MAX - 1 equals INT64_MAX.
  const auto ordered = [](const Scalar& lo, const Scalar& hi) {
    return lo.is_floating() || hi.is_floating() ? lo.to_double() <= hi.to_double() : lo.to_int64() <= hi.to_int64();
  };
  TS_CHECK(!min || !max || ordered(*min, *max), "clamp: min ", min->to_string(), " exceeds max ", max->to_string());
  fit_integer_bounds(x.dtype(), min, max);
  if (!min && !max) return clone(x);  // a new tensor, as every other call gives
  Tensor result = x;
  // A floating bound makes the result floating before either applies: an
  // integer min applied first would be stored in x's integer dtype.
  for (const std::optional<Scalar>& bound : {min, max}) {
    if (bound && bound->is_floating()) result = to(result, promote_with_scalar(result.dtype(), *bound));
  }
  if (min) result = maximum(result, *min);
  if (max) result = minimum(result, *max);
  return result;
}

}  // namespace ts
