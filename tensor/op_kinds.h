// The op families the backends implement, as enums: one kernel template per
// family, instantiated per op through the functor tables in functors.h.
#pragma once

#include <cstdint>

namespace ts {

enum class UnaryOp : uint8_t {
  // Defined for every numeric dtype (not bool).
  kNeg, kAbs, kSign, kSquare, kRelu,
  // Floating dtypes only; ops convert integer inputs to f32 first.
  kReciprocal, kExp, kLog, kLog1p, kExpm1, kSqrt, kRsqrt, kSin, kCos, kTanh, kSigmoid,
  kGelu,  // exact: x * Phi(x)
  kErf, kFloor, kCeil, kRound,
  // Any dtype in, bool out.
  kLogicalNot, kIsNan,
};

enum class BinaryOp : uint8_t {
  // Every numeric dtype.
  kAdd, kSub, kMul, kMaximum, kMinimum,
  // Floating dtypes only.
  kDiv, kPow,
  // Any dtype in, bool out.
  kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr,
};

enum class ReduceOp : uint8_t {
  kSum, kMean, kMax, kMin, kArgMax, kArgMin,
  kVar,    // with a correction (1 for the unbiased estimate)
  kNorm1, kNorm2, kNormInf, kNormP,
};

enum class RandomKind : uint8_t { kUniform, kNormal, kBernoulli };

bool is_float_only(UnaryOp op);
bool is_float_only(BinaryOp op);
bool returns_bool(UnaryOp op);
bool returns_bool(BinaryOp op);
const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);
const char* op_name(ReduceOp op);

}  // namespace ts
