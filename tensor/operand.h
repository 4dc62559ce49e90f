// An elementwise operand: a tensor, or a scalar broadcast to every element.
#pragma once

#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ts {

struct Operand {
  Tensor tensor;  // undefined for a scalar
  Scalar scalar;
  Operand(Tensor t) : tensor(std::move(t)) {}  // NOLINT: implicit, as Tensor and Scalar are both operands
  Operand(const Scalar& s) : scalar(s) {}      // NOLINT
  bool is_scalar() const { return !tensor.defined(); }
};

}  // namespace ts
