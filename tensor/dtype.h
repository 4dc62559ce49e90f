// Element types of tensors, their sizes and names, and the promotion rule that
// decides the result type of an op on mixed inputs.
#pragma once

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "tensor/half.h"

namespace ts {

// Ordered by promotion rank within each category (bool < integers < floats).
enum class DType : uint8_t { kBool, kU8, kI32, kI64, kF16, kBF16, kF32, kF64 };

inline constexpr DType kAllDTypes[] = {DType::kBool, DType::kU8,   DType::kI32, DType::kI64,
                                       DType::kF16,  DType::kBF16, DType::kF32, DType::kF64};

int64_t dtype_size(DType dtype);
absl::string_view dtype_name(DType dtype);  // "f32", "bf16", ...
absl::StatusOr<DType> parse_dtype(absl::string_view name);

inline bool is_floating(DType d) {
  return d == DType::kF16 || d == DType::kBF16 || d == DType::kF32 || d == DType::kF64;
}
inline bool is_integral(DType d) {  // bool is not integral
  return d == DType::kU8 || d == DType::kI32 || d == DType::kI64;
}
inline bool is_reduced_float(DType d) { return d == DType::kF16 || d == DType::kBF16; }

// The type both operands are converted to: the higher category wins (bool <
// integral < floating), then the wider type; f16 with bf16 gives f32 since
// neither holds the other.
DType promote_types(DType a, DType b);

// The float type an integral or bool input becomes for ops with real-valued
// results (div, exp, mean, ...). Floating types map to themselves.
inline DType to_floating(DType d) { return is_floating(d) ? d : DType::kF32; }

// Compile-time mapping from C++ element types to DType.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kU8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kI32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kI64;
};
template <>
struct DTypeOf<Half> {
  static constexpr DType value = DType::kF16;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::kBF16;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kF32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kF64;
};
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

}  // namespace ts
