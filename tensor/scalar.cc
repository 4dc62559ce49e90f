#include "tensor/scalar.h"

#include "absl/strings/str_cat.h"

namespace ts {

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::kBool:
      return i_ ? "true" : "false";
    case Kind::kInt:
      return absl::StrCat(i_);
    case Kind::kFloat:
      return absl::StrCat(d_);
  }
  return "";
}

DType promote_with_scalar(DType t, const Scalar& s) {
  if (s.kind() == Scalar::Kind::kFloat && !is_floating(t)) return DType::kF32;
  if (s.kind() == Scalar::Kind::kInt && t == DType::kBool) return DType::kI64;
  return t;
}

}  // namespace ts
