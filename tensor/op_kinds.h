// The op families the backends implement, as enums: one kernel template per
// family, instantiated per op through the functor dispatch in functors.h.
// The elementwise enums and their properties come from op_table.h.
#pragma once

#include <cstdint>

#include "tensor/op_table.h"

namespace ts {

// How an elementwise op treats dtypes (see op_table.h).
enum class DTypeRule : uint8_t { kNumeric, kFloating, kPredicate };

#define TS_OP_ENUMERATOR(name, Functor, rule) k##Functor,
enum class UnaryOp : uint8_t { TS_UNARY_OPS(TS_OP_ENUMERATOR) };
enum class BinaryOp : uint8_t { TS_BINARY_OPS(TS_OP_ENUMERATOR) };
#undef TS_OP_ENUMERATOR

enum class ReduceOp : uint8_t {
  kSum,
  kMean,
  kMax,
  kMin,
  kArgMax,
  kArgMin,
  kVar,  // with a correction (1 for the unbiased estimate)
  kNorm1,
  kNorm2,
  kNormInf,
  kNormP,
};

enum class RandomKind : uint8_t { kUniform, kNormal, kBernoulli };

DTypeRule dtype_rule(UnaryOp op);
DTypeRule dtype_rule(BinaryOp op);
const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);
const char* op_name(ReduceOp op);

// What the gradient of an elementwise op reads besides the incoming
// gradient, so that autograd saves only that.
struct GradReads {
  bool input = false;   // the op's input(s)
  bool output = false;  // the op's result
};
GradReads grad_reads(UnaryOp op);
GradReads grad_reads(BinaryOp op);
// Whether the gradient with respect to operand `input` (0 or 1) of a binary
// op is the incoming gradient itself (add; sub's first operand), so that no
// kernel needs to run for it.
bool grad_is_identity(BinaryOp op, int input);

}  // namespace ts
