#include "tensor/op_kinds.h"

namespace ts {

bool is_float_only(UnaryOp op) { return op >= UnaryOp::kReciprocal && op <= UnaryOp::kRound; }
bool is_float_only(BinaryOp op) { return op == BinaryOp::kDiv || op == BinaryOp::kPow; }
bool returns_bool(UnaryOp op) { return op >= UnaryOp::kLogicalNot; }
bool returns_bool(BinaryOp op) { return op >= BinaryOp::kEq; }

const char* op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "neg";
    case UnaryOp::kAbs: return "abs";
    case UnaryOp::kSign: return "sign";
    case UnaryOp::kSquare: return "square";
    case UnaryOp::kRelu: return "relu";
    case UnaryOp::kReciprocal: return "reciprocal";
    case UnaryOp::kExp: return "exp";
    case UnaryOp::kLog: return "log";
    case UnaryOp::kLog1p: return "log1p";
    case UnaryOp::kExpm1: return "expm1";
    case UnaryOp::kSqrt: return "sqrt";
    case UnaryOp::kRsqrt: return "rsqrt";
    case UnaryOp::kSin: return "sin";
    case UnaryOp::kCos: return "cos";
    case UnaryOp::kTanh: return "tanh";
    case UnaryOp::kSigmoid: return "sigmoid";
    case UnaryOp::kGelu: return "gelu";
    case UnaryOp::kErf: return "erf";
    case UnaryOp::kFloor: return "floor";
    case UnaryOp::kCeil: return "ceil";
    case UnaryOp::kRound: return "round";
    case UnaryOp::kLogicalNot: return "logical_not";
    case UnaryOp::kIsNan: return "isnan";
  }
  return "?";
}

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "add";
    case BinaryOp::kSub: return "sub";
    case BinaryOp::kMul: return "mul";
    case BinaryOp::kMaximum: return "maximum";
    case BinaryOp::kMinimum: return "minimum";
    case BinaryOp::kDiv: return "div";
    case BinaryOp::kPow: return "pow";
    case BinaryOp::kEq: return "eq";
    case BinaryOp::kNe: return "ne";
    case BinaryOp::kLt: return "lt";
    case BinaryOp::kLe: return "le";
    case BinaryOp::kGt: return "gt";
    case BinaryOp::kGe: return "ge";
    case BinaryOp::kLogicalAnd: return "logical_and";
    case BinaryOp::kLogicalOr: return "logical_or";
  }
  return "?";
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMean: return "mean";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kArgMax: return "argmax";
    case ReduceOp::kArgMin: return "argmin";
    case ReduceOp::kVar: return "var";
    case ReduceOp::kNorm1:
    case ReduceOp::kNorm2:
    case ReduceOp::kNormInf:
    case ReduceOp::kNormP: return "norm";
  }
  return "?";
}

}  // namespace ts
