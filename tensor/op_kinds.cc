#include "tensor/op_kinds.h"

#include "base/error.h"
#include "tensor/dtype_dispatch.h"
#include "tensor/functors.h"

namespace ts {
namespace {

// The gradient traits of a row's functor; predicates have none.
template <typename F, typename R>
constexpr GradReads reads_of(F, R) {
  if constexpr (R::value == DTypeRule::kPredicate) {
    return functors::kReadsNothing;
  } else {
    return F::kGradReads;
  }
}

}  // namespace

#define TS_RULE_CASE(name, Functor, rule) \
  case Op::k##Functor:                    \
    return DTypeRule::rule;
#define TS_NAME_CASE(name, Functor, rule) \
  case Op::k##Functor:                    \
    return #name;

DTypeRule dtype_rule(UnaryOp op) {
  using Op = UnaryOp;
  switch (op) { TS_UNARY_OPS(TS_RULE_CASE) }
  return DTypeRule::kPredicate;  // unreachable: every enumerator is handled
}

DTypeRule dtype_rule(BinaryOp op) {
  using Op = BinaryOp;
  switch (op) { TS_BINARY_OPS(TS_RULE_CASE) }
  return DTypeRule::kPredicate;
}

const char* op_name(UnaryOp op) {
  using Op = UnaryOp;
  switch (op) { TS_UNARY_OPS(TS_NAME_CASE) }
  return "?";
}

const char* op_name(BinaryOp op) {
  using Op = BinaryOp;
  switch (op) { TS_BINARY_OPS(TS_NAME_CASE) }
  return "?";
}

#undef TS_RULE_CASE
#undef TS_NAME_CASE

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMean:
      return "mean";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kArgMax:
      return "argmax";
    case ReduceOp::kArgMin:
      return "argmin";
    case ReduceOp::kVar:
      return "var";
    case ReduceOp::kNorm1:
    case ReduceOp::kNorm2:
    case ReduceOp::kNormInf:
    case ReduceOp::kNormP:
      return "norm";
  }
  return "?";
}

GradReads grad_reads(UnaryOp op) {
  return functors::visit_unary(op, [](auto f, auto rule) { return reads_of(f, rule); });
}

GradReads grad_reads(BinaryOp op) {
  return functors::visit_binary(op, [](auto f, auto rule) { return reads_of(f, rule); });
}

bool grad_is_identity(BinaryOp op, int input) {
  return functors::visit_binary(op, [input](auto f, auto) {
    using F = decltype(f);
    if constexpr (requires { F::kGradIsIdentity; }) {
      return F::kGradIsIdentity[input];
    } else {
      return false;
    }
  });
}

void no_kernel(const char* backend, const char* op, DType dtype) {
  throw_error(absl::StatusCode::kInternal, backend, " ", op, ": no kernel for ", dtype_name(dtype));
}

}  // namespace ts
