// The elementwise ops, one row each: the single place an elementwise op is
// declared. Everything else about it is generated from its row:
//   - its enumerator (UnaryOp::k<Functor>, BinaryOp::k<Functor>), name and
//     dtype rule (op_kinds.h),
//   - the functor dispatch both backends instantiate their kernels from,
//     forward and gradient (functors.h),
//   - its declarations in tensor/ops.h (Tensor <name>(...)) and, unless it is
//     a predicate, its differentiable form in autograd/ops.h,
//   - its place in the OpInfo test table (tests/op_info/op_info.h), which
//     tests it against float64 on the CPU, against the CPU on CUDA, and by
//     gradcheck.
// A new op is a row here and a functor in functors.h (forward and gradient);
// the OpInfo table (tests/op_info/op_info.cc) then needs its float64
// reference and input domain.
//
// X(name, Functor, rule). The rules:
//   kNumeric    every dtype but bool, computed and returned in the input's
//               (promoted) dtype
//   kFloating   integer and bool inputs are computed in f32; the result is
//               floating
//   kPredicate  any dtype in, bool out; not differentiable
#pragma once

#define TS_UNARY_OPS(X)                  \
  X(neg, Neg, kNumeric)                  \
  X(abs, Abs, kNumeric)                  \
  X(sign, Sign, kNumeric)                \
  X(square, Square, kNumeric)            \
  X(relu, Relu, kNumeric)                \
  X(reciprocal, Reciprocal, kFloating)   \
  X(exp, Exp, kFloating)                 \
  X(log, Log, kFloating)                 \
  X(log1p, Log1p, kFloating)             \
  X(expm1, Expm1, kFloating)             \
  X(sqrt, Sqrt, kFloating)               \
  X(rsqrt, Rsqrt, kFloating)             \
  X(sin, Sin, kFloating)                 \
  X(cos, Cos, kFloating)                 \
  X(tanh, Tanh, kFloating)               \
  X(sigmoid, Sigmoid, kFloating)         \
  X(silu, Silu, kFloating)               \
  X(softplus, Softplus, kFloating)       \
  X(gelu, Gelu, kFloating)               \
  X(erf, Erf, kFloating)                 \
  X(floor, Floor, kNumeric)              \
  X(ceil, Ceil, kNumeric)                \
  X(round, Round, kNumeric)              \
  X(logical_not, LogicalNot, kPredicate) \
  X(isnan, IsNan, kPredicate)

// Binary ops broadcast their operands (NumPy's rule) and take a Scalar for
// either one.
#define TS_BINARY_OPS(X)                                        \
  X(add, Add, kNumeric)                                         \
  X(sub, Sub, kNumeric)                                         \
  X(mul, Mul, kNumeric)                                         \
  X(maximum, Maximum, kNumeric)                                 \
  X(minimum, Minimum, kNumeric)                                 \
  X(div, Div, kFloating)                                        \
  X(pow, Pow, kFloating)                                        \
  X(binary_cross_entropy_with_logits, BceWithLogits, kFloating) \
  X(eq, Eq, kPredicate)                                         \
  X(ne, Ne, kPredicate)                                         \
  X(lt, Lt, kPredicate)                                         \
  X(le, Le, kPredicate)                                         \
  X(gt, Gt, kPredicate)                                         \
  X(ge, Ge, kPredicate)                                         \
  X(logical_and, LogicalAnd, kPredicate)                        \
  X(logical_or, LogicalOr, kPredicate)
