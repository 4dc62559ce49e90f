// Host-side dtype dispatch for the CPU kernels: visit_dtype calls a generic
// lambda with a tag carrying the element type (tensor/dtype_dispatch.h with
// ts::Half and ts::BFloat16), and Acc<T> is the type CPU kernels compute in
// (float for f16/bf16 elementwise; double for float reductions, which keeps
// long sums accurate at no cost on memory-bound loops).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "tensor/dtype.h"
#include "tensor/dtype_dispatch.h"
#include "tensor/float_to_int.h"
#include "tensor/half.h"

namespace ts::cpu {

template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  return visit_dtype_as<Half, BFloat16>(dtype, std::forward<F>(f));
}

template <typename T>
inline constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Elementwise compute type.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Reduction accumulator type.
template <typename T>
using ReduceAcc = std::conditional_t<is_float_v<T>, double, std::conditional_t<std::is_same_v<T, bool>, int64_t, T>>;

template <typename T>
inline Acc<T> load(T x) {
  return static_cast<Acc<T>>(x);
}

template <typename T, typename V>
inline T store(V v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_floating_point_v<V>) {
    return float_to_int<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace ts::cpu
