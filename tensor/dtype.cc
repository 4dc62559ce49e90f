#include "tensor/dtype.h"

#include "absl/strings/str_cat.h"

namespace ts {

int64_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kU8:
      return 1;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kI32:
    case DType::kF32:
      return 4;
    case DType::kI64:
    case DType::kF64:
      return 8;
  }
  return 0;
}

absl::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "bool";
    case DType::kU8:
      return "u8";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
  }
  return "?";
}

absl::StatusOr<DType> parse_dtype(absl::string_view name) {
  for (DType d : kAllDTypes) {
    if (dtype_name(d) == name) return d;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "' (expected bool, u8, i32, i64, f16, bf16, f32 or f64)"));
}

namespace {
int category(DType d) { return d == DType::kBool ? 0 : is_integral(d) ? 1 : 2; }
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (category(a) != category(b)) return category(a) > category(b) ? a : b;
  if (is_reduced_float(a) && is_reduced_float(b)) return DType::kF32;
  return static_cast<uint8_t>(a) > static_cast<uint8_t>(b) ? a : b;
}

}  // namespace ts
