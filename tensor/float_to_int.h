// Floating point to integer as both backends convert: toward zero, clamped to
// the integer type's range, NaN to 0. That is what CUDA's cvt instruction
// does for float-to-integer conversions (the PTX ISA: they saturate, and NaN
// becomes 0). C++ leaves an out-of-range value undefined, and x86 gives the
// "integer indefinite" (the lowest value), so without this a tensor of
// out-of-range or NaN values would convert differently on the CPU and the
// GPU.
#pragma once

#include <limits>
#include <type_traits>

#include "tensor/host_device.h"

namespace ts {

template <typename I, typename F>
TS_HOST_DEVICE I float_to_int(F v) {
  static_assert(std::is_integral_v<I> && !std::is_same_v<I, bool> && std::is_floating_point_v<F>);
  // Both bounds are powers of two (or 0), so exact in F: -2^(n-1) and 2^(n-1)
  // for a signed type of n bits, 0 and 2^n for an unsigned one.
  constexpr F lowest = static_cast<F>(std::numeric_limits<I>::lowest());
  constexpr F past_max = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * 2;
  if (v != v) return 0;
  if (v <= lowest) return std::numeric_limits<I>::lowest();
  if (v >= past_max) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

}  // namespace ts
