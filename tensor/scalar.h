// A number passed to an op (fill value, clamp bound, tensor-scalar operand):
// bool, int64 or double, converted to the element type where it is used.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tensor/dtype.h"
#include "tensor/float_to_int.h"

namespace ts {

class Scalar {
 public:
  enum class Kind : uint8_t { kBool, kInt, kFloat };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::kBool), i_(v) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::kInt), i_(static_cast<int64_t>(v)) {}
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::kFloat), d_(static_cast<double>(v)) {}

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::kFloat; }
  double to_double() const { return kind_ == Kind::kFloat ? d_ : static_cast<double>(i_); }
  // A floating value converts as tensors do (float_to_int.h): toward zero,
  // clamped, NaN to 0.
  int64_t to_int64() const { return kind_ == Kind::kFloat ? float_to_int<int64_t>(d_) : i_; }
  std::string to_string() const;

  // The value as element type T (Half, BFloat16, float, int32_t, bool, ...).
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return kind_ == Kind::kFloat ? d_ != 0.0 : i_ != 0;
    } else if constexpr (std::is_integral_v<T>) {
      return kind_ == Kind::kFloat ? float_to_int<T>(d_) : static_cast<T>(i_);
    } else if constexpr (std::is_same_v<T, double>) {
      return to_double();
    } else {
      return T(static_cast<float>(to_double()));
    }
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

// Result type of an op between a tensor of type `t` and a scalar: the tensor's
// type wins unless the scalar is of a higher category (a float scalar with an
// integer tensor gives f32; an integer scalar with a bool tensor gives i64).
DType promote_with_scalar(DType t, const Scalar& s);

}  // namespace ts
