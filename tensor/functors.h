// The math of every elementwise and reduction op, written once for both
// backends: CPU kernels call these from host code, CUDA kernels from device
// code. Functors work on the accumulation type (float for f16/bf16 inputs);
// kernels load, convert, apply and store. The visit_* tables map an op enum to
// its functor, so each backend's kernel template is instantiated per op from
// one place.
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

// ---- Unary. `kFloatOnly` functors are instantiated for float/double only.
struct Neg { static constexpr bool kFloatOnly = false; template <class T> TS_HOST_DEVICE T operator()(T x) const { return -x; } };
struct Abs {
  static constexpr bool kFloatOnly = false;
  template <class T> TS_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) return x; else return x < T(0) ? T(-x) : x;
  }
};
struct Sign {
  static constexpr bool kFloatOnly = false;
  template <class T> TS_HOST_DEVICE T operator()(T x) const {
    if (is_nan(x)) return x;
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
struct Square { static constexpr bool kFloatOnly = false; template <class T> TS_HOST_DEVICE T operator()(T x) const { return x * x; } };
// NaN propagates, as in PyTorch.
struct Relu { static constexpr bool kFloatOnly = false; template <class T> TS_HOST_DEVICE T operator()(T x) const { return x < T(0) ? T(0) : x; } };
struct Reciprocal { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return T(1) / x; } };
struct Exp { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::exp(x); } };
struct Log { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::log(x); } };
struct Log1p { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::log1p(x); } };
struct Expm1 { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::expm1(x); } };
struct Sqrt { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::sqrt(x); } };
struct Rsqrt { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return T(1) / fm::sqrt(x); } };
struct Sin { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::sin(x); } };
struct Cos { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::cos(x); } };
struct Tanh { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::tanh(x); } };
struct Sigmoid { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return T(1) / (T(1) + fm::exp(-x)); } };
struct Gelu {
  static constexpr bool kFloatOnly = true;
  template <class T> TS_HOST_DEVICE T operator()(T x) const {
    // erfc(-x/sqrt(2)) = 1 + erf(x/sqrt(2)) without the cancellation that
    // 1 + erf(...) suffers for negative x.
    return T(0.5) * x * fm::erfc(x * T(-0.70710678118654752440));
  }
};
struct Erf { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::erf(x); } };
struct Floor { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::floor(x); } };
struct Ceil { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::ceil(x); } };
struct Round { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T x) const { return fm::rint(x); } };
// Bool results; defined for every input type.
struct LogicalNot { template <class T> TS_HOST_DEVICE bool operator()(T x) const { return x == T(0); } };
struct IsNan { template <class T> TS_HOST_DEVICE bool operator()(T x) const { return is_nan(x); } };

// Calls f(Functor{}) for a value-returning unary op, g(Functor{}) for a
// bool-returning one.
template <typename F, typename G>
decltype(auto) visit_unary(UnaryOp op, F&& f, G&& g) {
  switch (op) {
    case UnaryOp::kNeg: return f(Neg{});
    case UnaryOp::kAbs: return f(Abs{});
    case UnaryOp::kSign: return f(Sign{});
    case UnaryOp::kSquare: return f(Square{});
    case UnaryOp::kRelu: return f(Relu{});
    case UnaryOp::kReciprocal: return f(Reciprocal{});
    case UnaryOp::kExp: return f(Exp{});
    case UnaryOp::kLog: return f(Log{});
    case UnaryOp::kLog1p: return f(Log1p{});
    case UnaryOp::kExpm1: return f(Expm1{});
    case UnaryOp::kSqrt: return f(Sqrt{});
    case UnaryOp::kRsqrt: return f(Rsqrt{});
    case UnaryOp::kSin: return f(Sin{});
    case UnaryOp::kCos: return f(Cos{});
    case UnaryOp::kTanh: return f(Tanh{});
    case UnaryOp::kSigmoid: return f(Sigmoid{});
    case UnaryOp::kGelu: return f(Gelu{});
    case UnaryOp::kErf: return f(Erf{});
    case UnaryOp::kFloor: return f(Floor{});
    case UnaryOp::kCeil: return f(Ceil{});
    case UnaryOp::kRound: return f(Round{});
    case UnaryOp::kLogicalNot: return g(LogicalNot{});
    case UnaryOp::kIsNan: return g(IsNan{});
  }
  return g(IsNan{});  // unreachable: every enumerator is handled
}

// ---- Binary.
struct Add { static constexpr bool kFloatOnly = false; template <class T> TS_HOST_DEVICE T operator()(T a, T b) const { return a + b; } };
struct Sub { static constexpr bool kFloatOnly = false; template <class T> TS_HOST_DEVICE T operator()(T a, T b) const { return a - b; } };
struct Mul { static constexpr bool kFloatOnly = false; template <class T> TS_HOST_DEVICE T operator()(T a, T b) const { return a * b; } };
// NaN in either operand gives NaN, as in PyTorch.
struct Maximum {
  static constexpr bool kFloatOnly = false;
  template <class T> TS_HOST_DEVICE T operator()(T a, T b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return a < b ? b : a;
  }
};
struct Minimum {
  static constexpr bool kFloatOnly = false;
  template <class T> TS_HOST_DEVICE T operator()(T a, T b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return b < a ? b : a;
  }
};
struct Div { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T a, T b) const { return a / b; } };
struct Pow { static constexpr bool kFloatOnly = true; template <class T> TS_HOST_DEVICE T operator()(T a, T b) const { return fm::pow(a, b); } };
struct Eq { template <class T> TS_HOST_DEVICE bool operator()(T a, T b) const { return a == b; } };
struct Ne { template <class T> TS_HOST_DEVICE bool operator()(T a, T b) const { return a != b; } };
struct Lt { template <class T> TS_HOST_DEVICE bool operator()(T a, T b) const { return a < b; } };
struct Le { template <class T> TS_HOST_DEVICE bool operator()(T a, T b) const { return a <= b; } };
struct Gt { template <class T> TS_HOST_DEVICE bool operator()(T a, T b) const { return a > b; } };
struct Ge { template <class T> TS_HOST_DEVICE bool operator()(T a, T b) const { return a >= b; } };
struct LogicalAnd { template <class T> TS_HOST_DEVICE bool operator()(T a, T b) const { return a != T(0) && b != T(0); } };
struct LogicalOr { template <class T> TS_HOST_DEVICE bool operator()(T a, T b) const { return a != T(0) || b != T(0); } };

template <typename F, typename G>
decltype(auto) visit_binary(BinaryOp op, F&& f, G&& g) {
  switch (op) {
    case BinaryOp::kAdd: return f(Add{});
    case BinaryOp::kSub: return f(Sub{});
    case BinaryOp::kMul: return f(Mul{});
    case BinaryOp::kMaximum: return f(Maximum{});
    case BinaryOp::kMinimum: return f(Minimum{});
    case BinaryOp::kDiv: return f(Div{});
    case BinaryOp::kPow: return f(Pow{});
    case BinaryOp::kEq: return g(Eq{});
    case BinaryOp::kNe: return g(Ne{});
    case BinaryOp::kLt: return g(Lt{});
    case BinaryOp::kLe: return g(Le{});
    case BinaryOp::kGt: return g(Gt{});
    case BinaryOp::kGe: return g(Ge{});
    case BinaryOp::kLogicalAnd: return g(LogicalAnd{});
    case BinaryOp::kLogicalOr: return g(LogicalOr{});
  }
  return g(Eq{});  // unreachable
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
  TS_HOST_DEVICE Acc transform(A x, int64_t) const { return {x, A(0), A(1)}; }
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
    if constexpr (kKind == NormKind::kTwo) return ax * ax;
    else if constexpr (kKind == NormKind::kP) return fm::pow(ax, p);
    else return ax;
  }
  TS_HOST_DEVICE A combine(A a, A b) const {
    if constexpr (kKind == NormKind::kInf) return Maximum{}(a, b); else return a + b;
  }
  TS_HOST_DEVICE A finalize(A a) const {
    if constexpr (kKind == NormKind::kTwo) return fm::sqrt(a);
    else if constexpr (kKind == NormKind::kP) return fm::pow(a, A(1) / p);
    else return a;
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
      case ReduceOp::kSum: return f(SumReducer<A>{});
      case ReduceOp::kMax: return f(ExtremumReducer<A, true>{});
      case ReduceOp::kMin: return f(ExtremumReducer<A, false>{});
      case ReduceOp::kArgMax: return f(ArgExtremumReducer<A, true>{});
      case ReduceOp::kArgMin: return f(ArgExtremumReducer<A, false>{});
      default: return f(UnsupportedReducer{});
    }
  } else {
    switch (op) {
      case ReduceOp::kSum: return f(SumReducer<A>{});
      case ReduceOp::kMean: return f(SumReducer<A>{A(1) / A(count)});
      case ReduceOp::kMax: return f(ExtremumReducer<A, true>{});
      case ReduceOp::kMin: return f(ExtremumReducer<A, false>{});
      case ReduceOp::kArgMax: return f(ArgExtremumReducer<A, true>{});
      case ReduceOp::kArgMin: return f(ArgExtremumReducer<A, false>{});
      case ReduceOp::kVar: return f(VarReducer<A>{A(param)});
      case ReduceOp::kNorm1: return f(NormReducer<A, NormKind::kOne>{});
      case ReduceOp::kNorm2: return f(NormReducer<A, NormKind::kTwo>{});
      case ReduceOp::kNormInf: return f(NormReducer<A, NormKind::kInf>{});
      case ReduceOp::kNormP: return f(NormReducer<A, NormKind::kP>{A(param)});
    }
  }
  return f(UnsupportedReducer{});  // unreachable: every enumerator is handled
}

}  // namespace ts::functors
