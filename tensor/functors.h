// The math of every elementwise and reduction op and of the elementwise
// gradients, written once for both backends: CPU kernels call these from host
// code, CUDA kernels from device code. Functors work on the compute type
// (float for f16/bf16 inputs); kernels load, convert, apply and store. The
// visit_* functions, generated from op_table.h, map an op enum to its functor
// and dtype rule, so each backend's kernel templates are instantiated per op
// from one place.
#pragma once

#include <math.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "tensor/host_device.h"
#include "tensor/op_kinds.h"

namespace ts::functors {

// ---- Float math with float and double overloads, valid on host and device.
namespace fm {
TS_HOST_DEVICE float exp(float x) { return ::expf(x); }
TS_HOST_DEVICE double exp(double x) { return ::exp(x); }
TS_HOST_DEVICE float log(float x) { return ::logf(x); }
TS_HOST_DEVICE double log(double x) { return ::log(x); }
TS_HOST_DEVICE float log1p(float x) { return ::log1pf(x); }
TS_HOST_DEVICE double log1p(double x) { return ::log1p(x); }
TS_HOST_DEVICE float expm1(float x) { return ::expm1f(x); }
TS_HOST_DEVICE double expm1(double x) { return ::expm1(x); }
TS_HOST_DEVICE float sqrt(float x) { return ::sqrtf(x); }
TS_HOST_DEVICE double sqrt(double x) { return ::sqrt(x); }
TS_HOST_DEVICE float sin(float x) { return ::sinf(x); }
TS_HOST_DEVICE double sin(double x) { return ::sin(x); }
TS_HOST_DEVICE float cos(float x) { return ::cosf(x); }
TS_HOST_DEVICE double cos(double x) { return ::cos(x); }
TS_HOST_DEVICE float tanh(float x) { return ::tanhf(x); }
TS_HOST_DEVICE double tanh(double x) { return ::tanh(x); }
TS_HOST_DEVICE float erf(float x) { return ::erff(x); }
TS_HOST_DEVICE double erf(double x) { return ::erf(x); }
TS_HOST_DEVICE float erfc(float x) { return ::erfcf(x); }
TS_HOST_DEVICE double erfc(double x) { return ::erfc(x); }
TS_HOST_DEVICE float floor(float x) { return ::floorf(x); }
TS_HOST_DEVICE double floor(double x) { return ::floor(x); }
TS_HOST_DEVICE float ceil(float x) { return ::ceilf(x); }
TS_HOST_DEVICE double ceil(double x) { return ::ceil(x); }
TS_HOST_DEVICE float rint(float x) { return ::rintf(x); }  // half to even
TS_HOST_DEVICE double rint(double x) { return ::rint(x); }
TS_HOST_DEVICE float fabs(float x) { return ::fabsf(x); }
TS_HOST_DEVICE double fabs(double x) { return ::fabs(x); }
TS_HOST_DEVICE float pow(float x, float y) { return ::powf(x, y); }
TS_HOST_DEVICE double pow(double x, double y) { return ::pow(x, y); }
}  // namespace fm

template <typename T>
TS_HOST_DEVICE bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

template <typename T>
TS_HOST_DEVICE T lowest() {
  if constexpr (std::is_floating_point_v<T>) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

template <typename T>
TS_HOST_DEVICE T highest() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

// ---- Elementwise functors: operator() is the op; grad(...) its gradient,
// the incoming gradient g times the derivative, in one expression so that
// one kernel computes it. kGradReads says which saved values grad reads
// (the others are passed as 0 and never loaded). Gradients are only
// instantiated for floating types.
inline constexpr GradReads kReadsNothing{false, false};
inline constexpr GradReads kReadsInput{true, false};
inline constexpr GradReads kReadsOutput{false, true};

// Unary: grad(g, x, y) with y = op(x).
struct Neg {
  static constexpr GradReads kGradReads = kReadsNothing;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return -x;
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T) const {
    return -g;
  }
};
struct Abs {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else
      return x < T(0) ? T(-x) : x;
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    return x > T(0) ? g : x < T(0) ? -g : T(0);
  }
};
struct Sign {
  static constexpr GradReads kGradReads = kReadsNothing;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    if (is_nan(x)) return x;
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
  template <class T>
  TS_HOST_DEVICE T grad(T, T, T) const {
    return T(0);
  }
};
struct Square {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return x * x;
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    return T(2) * x * g;
  }
};
// NaN propagates, as in PyTorch. The gradient is PyTorch's threshold_backward
// on the output: 0 where y <= 0, else g (a NaN output passes g on).
struct Relu {
  static constexpr GradReads kGradReads = kReadsOutput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return x < T(0) ? T(0) : x;
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T y) const {
    return y <= T(0) ? T(0) : g;
  }
};
struct Reciprocal {
  static constexpr GradReads kGradReads = kReadsOutput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return T(1) / x;
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T y) const {
    return -g * y * y;
  }
};
struct Exp {
  static constexpr GradReads kGradReads = kReadsOutput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::exp(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T y) const {
    return g * y;
  }
};
struct Log {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::log(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    return g / x;
  }
};
struct Log1p {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::log1p(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    return g / (T(1) + x);
  }
};
struct Expm1 {
  static constexpr GradReads kGradReads = kReadsOutput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::expm1(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T y) const {
    return g * (y + T(1));
  }
};
struct Sqrt {
  static constexpr GradReads kGradReads = kReadsOutput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::sqrt(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T y) const {
    return g / (T(2) * y);
  }
};
struct Rsqrt {
  static constexpr GradReads kGradReads = kReadsOutput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return T(1) / fm::sqrt(x);
  }
  // d x^(-1/2) = -x^(-3/2) / 2 = -y^3 / 2.
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T y) const {
    return T(-0.5) * g * y * y * y;
  }
};
struct Sin {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::sin(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    return g * fm::cos(x);
  }
};
struct Cos {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::cos(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    return -g * fm::sin(x);
  }
};
struct Tanh {
  static constexpr GradReads kGradReads = kReadsOutput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::tanh(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T y) const {
    return g * (T(1) - y * y);
  }
};
struct Sigmoid {
  static constexpr GradReads kGradReads = kReadsOutput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return T(1) / (T(1) + fm::exp(-x));
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T, T y) const {
    return g * y * (T(1) - y);
  }
};
// x * sigmoid(x) (SiLU, swish).
struct Silu {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return x / (T(1) + fm::exp(-x));
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    const T s = T(1) / (T(1) + fm::exp(-x));
    return g * s * (T(1) + x * (T(1) - s));
  }
};
// log(1 + exp(x)), and x itself above 20 where the two agree in f32 and
// exp would overflow sooner or later (PyTorch's softplus, beta 1,
// threshold 20). Its derivative is sigmoid(x), and 1 above the threshold.
struct Softplus {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return x > T(20) ? x : fm::log1p(fm::exp(x));
  }
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    return x > T(20) ? g : g / (T(1) + fm::exp(-x));
  }
};
// Exact GELU: x * Phi(x), Phi the standard normal CDF.
struct Gelu {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    // erfc(-x/sqrt(2)) = 1 + erf(x/sqrt(2)) without the cancellation that
    // 1 + erf(...) suffers for negative x.
    return T(0.5) * x * fm::erfc(x * T(-0.70710678118654752440));
  }
  // d/dx x*Phi(x) = Phi(x) + x*phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi).
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    const T cdf = T(0.5) * fm::erfc(x * T(-0.70710678118654752440));
    const T pdf = T(0.39894228040143267794) * fm::exp(T(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
struct Erf {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    return fm::erf(x);
  }
  // 2/sqrt(pi) exp(-x^2).
  template <class T>
  TS_HOST_DEVICE T grad(T g, T x, T) const {
    return g * T(1.12837916709551257390) * fm::exp(-x * x);
  }
};
// Piecewise constant: zero gradient almost everywhere, as in PyTorch.
struct Floor {
  static constexpr GradReads kGradReads = kReadsNothing;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return x;  // exact, in the integer's own type
    else
      return fm::floor(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T, T, T) const {
    return T(0);
  }
};
struct Ceil {
  static constexpr GradReads kGradReads = kReadsNothing;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return x;  // exact, in the integer's own type
    else
      return fm::ceil(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T, T, T) const {
    return T(0);
  }
};
struct Round {  // half to even
  static constexpr GradReads kGradReads = kReadsNothing;
  template <class T>
  TS_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return x;  // exact, in the integer's own type
    else
      return fm::rint(x);
  }
  template <class T>
  TS_HOST_DEVICE T grad(T, T, T) const {
    return T(0);
  }
};
// Predicates: bool results, defined for every input type, no gradient.
struct LogicalNot {
  template <class T>
  TS_HOST_DEVICE bool operator()(T x) const {
    return x == T(0);
  }
};
struct IsNan {
  template <class T>
  TS_HOST_DEVICE bool operator()(T x) const {
    return is_nan(x);
  }
};

// Binary: grad_a(g, a, b, y) and grad_b(g, a, b, y) with y = op(a, b), at
// the broadcast shape. kGradIsIdentity[k]: operand k's gradient is g itself.
struct Add {
  static constexpr GradReads kGradReads = kReadsNothing;
  static constexpr bool kGradIsIdentity[2] = {true, true};
  template <class T>
  TS_HOST_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
  template <class T>
  TS_HOST_DEVICE T grad_a(T g, T, T, T) const {
    return g;
  }
  template <class T>
  TS_HOST_DEVICE T grad_b(T g, T, T, T) const {
    return g;
  }
};
struct Sub {
  static constexpr GradReads kGradReads = kReadsNothing;
  static constexpr bool kGradIsIdentity[2] = {true, false};
  template <class T>
  TS_HOST_DEVICE T operator()(T a, T b) const {
    return a - b;
  }
  template <class T>
  TS_HOST_DEVICE T grad_a(T g, T, T, T) const {
    return g;
  }
  template <class T>
  TS_HOST_DEVICE T grad_b(T g, T, T, T) const {
    return -g;
  }
};
struct Mul {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T a, T b) const {
    return a * b;
  }
  template <class T>
  TS_HOST_DEVICE T grad_a(T g, T, T b, T) const {
    return g * b;
  }
  template <class T>
  TS_HOST_DEVICE T grad_b(T g, T a, T, T) const {
    return g * a;
  }
};
// NaN in either operand gives NaN, as in PyTorch. Ties split the gradient
// evenly between the operands (PyTorch's maximum/minimum backward).
struct Maximum {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T a, T b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a < b ? b : a;
  }
  template <class T>
  TS_HOST_DEVICE T grad_a(T g, T a, T b, T) const {
    return a == b ? g / T(2) : a < b ? T(0) : g;
  }
  template <class T>
  TS_HOST_DEVICE T grad_b(T g, T a, T b, T) const {
    return a == b ? g / T(2) : a > b ? T(0) : g;
  }
};
struct Minimum {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T a, T b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return b < a ? b : a;
  }
  template <class T>
  TS_HOST_DEVICE T grad_a(T g, T a, T b, T) const {
    return a == b ? g / T(2) : a > b ? T(0) : g;
  }
  template <class T>
  TS_HOST_DEVICE T grad_b(T g, T a, T b, T) const {
    return a == b ? g / T(2) : a < b ? T(0) : g;
  }
};
struct Div {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T a, T b) const {
    return a / b;
  }
  template <class T>
  TS_HOST_DEVICE T grad_a(T g, T, T b, T) const {
    return g / b;
  }
  template <class T>
  TS_HOST_DEVICE T grad_b(T g, T a, T b, T) const {
    // As PyTorch: b * b under- or overflows in f32 where a / b does not.
    return -g * (a / b / b);
  }
};
// PyTorch's masks: no gradient through a zero exponent, and none into the
// exponent where the base is 0 and the exponent non-negative (log 0).
struct Pow {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T a, T b) const {
    return fm::pow(a, b);
  }
  template <class T>
  TS_HOST_DEVICE T grad_a(T g, T a, T b, T) const {
    return b == T(0) ? T(0) : g * b * fm::pow(a, b - T(1));
  }
  template <class T>
  TS_HOST_DEVICE T grad_b(T g, T a, T b, T) const {
    return a == T(0) && b >= T(0) ? T(0) : g * fm::pow(a, b) * fm::log(a);
  }
};
// Binary cross-entropy of logit a against target b, unreduced:
// max(a, 0) - a*b + log(1 + exp(-|a|)), which never overflows. Its gradient
// sigmoid(a) - b is exact at a = 0, where the composition's abs and relu are
// not differentiable.
struct BceWithLogits {
  static constexpr GradReads kGradReads = kReadsInput;
  template <class T>
  TS_HOST_DEVICE T operator()(T a, T b) const {
    return (a > T(0) ? a : T(0)) - a * b + fm::log1p(fm::exp(-fm::fabs(a)));
  }
  template <class T>
  TS_HOST_DEVICE T grad_a(T g, T a, T b, T) const {
    return g * (T(1) / (T(1) + fm::exp(-a)) - b);
  }
  template <class T>
  TS_HOST_DEVICE T grad_b(T g, T a, T, T) const {
    return -g * a;
  }
};
struct Eq {
  template <class T>
  TS_HOST_DEVICE bool operator()(T a, T b) const {
    return a == b;
  }
};
struct Ne {
  template <class T>
  TS_HOST_DEVICE bool operator()(T a, T b) const {
    return a != b;
  }
};
struct Lt {
  template <class T>
  TS_HOST_DEVICE bool operator()(T a, T b) const {
    return a < b;
  }
};
struct Le {
  template <class T>
  TS_HOST_DEVICE bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct Gt {
  template <class T>
  TS_HOST_DEVICE bool operator()(T a, T b) const {
    return a > b;
  }
};
struct Ge {
  template <class T>
  TS_HOST_DEVICE bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct LogicalAnd {
  template <class T>
  TS_HOST_DEVICE bool operator()(T a, T b) const {
    return a != T(0) && b != T(0);
  }
};
struct LogicalOr {
  template <class T>
  TS_HOST_DEVICE bool operator()(T a, T b) const {
    return a != T(0) || b != T(0);
  }
};

// A row's dtype rule as a type, so kernels can decide at compile time which
// element types an op is instantiated for.
template <DTypeRule kRule>
struct Rule {
  static constexpr DTypeRule value = kRule;
};

// Whether a kernel of an op with rule R exists for element type T (whose
// floating-ness and bool-ness the backend knows): numeric ops take every
// type but bool, floating ones floating types (ops convert other inputs
// first), predicates every type.
template <typename R, bool kIsFloat, bool kIsBool>
constexpr bool rule_supports() {
  if constexpr (R::value == DTypeRule::kPredicate)
    return true;
  else if constexpr (R::value == DTypeRule::kFloating)
    return kIsFloat;
  else
    return !kIsBool;
}

// Calls f(Functor{}, Rule<rule>{}) for the op, from its op_table.h row.
template <typename F>
decltype(auto) visit_unary(UnaryOp op, F&& f) {
  switch (op) {
#define TS_VISIT_CASE(name, Functor, rule) \
  case UnaryOp::k##Functor:                \
    return f(Functor{}, Rule<DTypeRule::rule>{});
    TS_UNARY_OPS(TS_VISIT_CASE)
#undef TS_VISIT_CASE
  }
  return f(IsNan{}, Rule<DTypeRule::kPredicate>{});  // unreachable: every enumerator is handled
}

template <typename F>
decltype(auto) visit_binary(BinaryOp op, F&& f) {
  switch (op) {
#define TS_VISIT_CASE(name, Functor, rule) \
  case BinaryOp::k##Functor:               \
    return f(Functor{}, Rule<DTypeRule::rule>{});
    TS_BINARY_OPS(TS_VISIT_CASE)
#undef TS_VISIT_CASE
  }
  return f(Eq{}, Rule<DTypeRule::kPredicate>{});  // unreachable
}

// ---- Reductions over an accumulator type A. Each reducer: identity(),
// transform(x) of an input already converted to A, combine(a, b) that is
// associative (kernels combine in any order), finalize(acc, count).
template <typename A>
struct SumReducer {
  using Acc = A;
  A scale = A(1);  // 1/count for the mean
  TS_HOST_DEVICE A identity() const { return A(0); }
  TS_HOST_DEVICE A transform(A x, int64_t) const { return x; }
  TS_HOST_DEVICE A combine(A a, A b) const { return a + b; }
  TS_HOST_DEVICE A finalize(A a) const { return a * scale; }
};

template <typename A, bool kMax>
struct ExtremumReducer {
  using Acc = A;
  TS_HOST_DEVICE A identity() const { return kMax ? lowest<A>() : highest<A>(); }
  TS_HOST_DEVICE A transform(A x, int64_t) const { return x; }
  TS_HOST_DEVICE A combine(A a, A b) const { return kMax ? Maximum{}(a, b) : Minimum{}(a, b); }
  TS_HOST_DEVICE A finalize(A a) const { return a; }
};

template <typename A>
struct ValueIndex {
  A value;
  int64_t index;
};

// First occurrence wins ties; NaN counts as the extreme (as in PyTorch).
template <typename A, bool kMax>
struct ArgExtremumReducer {
  using Acc = ValueIndex<A>;
  TS_HOST_DEVICE Acc identity() const { return {kMax ? lowest<A>() : highest<A>(), -1}; }
  TS_HOST_DEVICE Acc transform(A x, int64_t i) const { return {x, i}; }
  TS_HOST_DEVICE Acc combine(Acc a, Acc b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.index < b.index ? a : b;
      return a_nan ? a : b;
    }
    if (a.value == b.value) return a.index < b.index ? a : b;
    return (kMax ? a.value > b.value : a.value < b.value) ? a : b;
  }
  TS_HOST_DEVICE int64_t finalize(Acc a) const { return a.index; }
};

// Whether a reducer's result is an index (i64) rather than a value.
template <typename Reducer>
inline constexpr bool kReturnsIndex = false;
template <typename A, bool kMax>
inline constexpr bool kReturnsIndex<ArgExtremumReducer<A, kMax>> = true;

template <typename A>
struct WelfordState {
  A mean;
  A m2;
  A count;
};

// Chan et al.'s parallel combination of Welford's running moments.
template <typename A>
struct VarReducer {
  using Acc = WelfordState<A>;
  A correction = A(1);
  TS_HOST_DEVICE Acc identity() const { return {A(0), A(0), A(0)}; }
  // m2 starts at x - x: NaN for an infinite (or NaN) element, which makes
  // the variance NaN wherever it sits, as in PyTorch (Welford's moments gave
  // inf when the infinity came last in the combining order).
  TS_HOST_DEVICE Acc transform(A x, int64_t) const { return {x, x - x, A(1)}; }
  TS_HOST_DEVICE Acc combine(Acc a, Acc b) const {
    if (a.count == A(0)) return b;
    if (b.count == A(0)) return a;
    const A count = a.count + b.count;
    const A delta = b.mean - a.mean;
    const A nb_over_n = b.count / count;
    return {a.mean + delta * nb_over_n, a.m2 + b.m2 + delta * delta * a.count * nb_over_n, count};
  }
  TS_HOST_DEVICE A finalize(Acc a) const {
    const A dof = a.count - correction;
    return dof > A(0) ? a.m2 / dof : A(NAN);
  }
};

enum class NormKind { kOne, kTwo, kInf, kP };

template <typename A, NormKind kKind>
struct NormReducer {
  using Acc = A;
  A p = A(2);
  TS_HOST_DEVICE A identity() const { return A(0); }
  TS_HOST_DEVICE A transform(A x, int64_t) const {
    const A ax = fm::fabs(x);
    if constexpr (kKind == NormKind::kTwo)
      return ax * ax;
    else if constexpr (kKind == NormKind::kP)
      return fm::pow(ax, p);
    else
      return ax;
  }
  TS_HOST_DEVICE A combine(A a, A b) const {
    if constexpr (kKind == NormKind::kInf)
      return Maximum{}(a, b);
    else
      return a + b;
  }
  TS_HOST_DEVICE A finalize(A a) const {
    if constexpr (kKind == NormKind::kTwo)
      return fm::sqrt(a);
    else if constexpr (kKind == NormKind::kP)
      return fm::pow(a, A(1) / p);
    else
      return a;
  }
};

// Passed instead of a reducer for an op the accumulator type cannot do (var
// or norm of integers); ops never ask for one, and kernels report it.
struct UnsupportedReducer {};

// Calls f(reducer) with the reducer for `op` over accumulator A. `param` is
// the correction (var) or p (norm); `count` the number of reduced elements.
template <typename A, typename F>
decltype(auto) visit_reduce(ReduceOp op, double param, int64_t count, F&& f) {
  if constexpr (!std::is_floating_point_v<A>) {
    switch (op) {
      case ReduceOp::kSum:
        return f(SumReducer<A>{});
      case ReduceOp::kMax:
        return f(ExtremumReducer<A, true>{});
      case ReduceOp::kMin:
        return f(ExtremumReducer<A, false>{});
      case ReduceOp::kArgMax:
        return f(ArgExtremumReducer<A, true>{});
      case ReduceOp::kArgMin:
        return f(ArgExtremumReducer<A, false>{});
      default:
        return f(UnsupportedReducer{});
    }
  } else {
    switch (op) {
      case ReduceOp::kSum:
        return f(SumReducer<A>{});
      case ReduceOp::kMean:
        return f(SumReducer<A>{A(1) / A(count)});
      case ReduceOp::kMax:
        return f(ExtremumReducer<A, true>{});
      case ReduceOp::kMin:
        return f(ExtremumReducer<A, false>{});
      case ReduceOp::kArgMax:
        return f(ArgExtremumReducer<A, true>{});
      case ReduceOp::kArgMin:
        return f(ArgExtremumReducer<A, false>{});
      case ReduceOp::kVar:
        return f(VarReducer<A>{A(param)});
      case ReduceOp::kNorm1:
        return f(NormReducer<A, NormKind::kOne>{});
      case ReduceOp::kNorm2:
        return f(NormReducer<A, NormKind::kTwo>{});
      case ReduceOp::kNormInf:
        return f(NormReducer<A, NormKind::kInf>{});
      case ReduceOp::kNormP:
        return f(NormReducer<A, NormKind::kP>{A(param)});
    }
  }
  return f(UnsupportedReducer{});  // unreachable: every enumerator is handled
}

}  // namespace ts::functors
