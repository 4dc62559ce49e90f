// What every CUDA kernel file shares: the device element type of each dtype,
// the types kernels compute and accumulate in, conversions between them, and
// how many blocks a launch gets. For .cu files only (the headers of a
// cuda_library are .h because cc_library takes no other suffix).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "tensor/dtype.h"
#include "tensor/dtype_dispatch.h"
#include "tensor/float_to_int.h"
#include "tensor/half.h"
#include "tensor/scalar.h"

namespace ts::cuda {

// Calls f(TypeTag<E>{}) with the element type kernels use for `dtype`: CUDA's
// __half and __nv_bfloat16 for the 16-bit floats (the bit layouts of
// ts::Half and ts::BFloat16), the C++ type otherwise (dtype_dispatch.h).
template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  return visit_dtype_as<__half, __nv_bfloat16>(dtype, std::forward<F>(f));
}

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

// The host type with T's bits (ts::Half for __half), for converting scalars.
template <typename T>
using HostType = std::conditional_t<std::is_same_v<T, __half>, Half,
                                    std::conditional_t<std::is_same_v<T, __nv_bfloat16>, BFloat16, T>>;

// The type elementwise functors compute in: float for f16/bf16, as on the CPU.
template <typename T>
using Compute = std::conditional_t<is_half_v<T>, float, T>;

// The type reductions accumulate values in: float for f16/bf16/f32, double
// for f64, int64_t for the integers.
template <typename T>
using ReduceAcc =
    std::conditional_t<std::is_same_v<T, double>, double, std::conditional_t<is_float_v<T>, float, int64_t>>;

template <typename T>
__device__ __forceinline__ Compute<T> load(T x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(x);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else {
    return x;
  }
}

// Rounds v to T; 16-bit floats go through float (round to nearest even), as
// ts::Half and ts::BFloat16 do, so both backends round wider values twice alike.
template <typename T, typename V>
__device__ __forceinline__ T store(V v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_floating_point_v<V>) {
    return float_to_int<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// A scalar operand as kernels compute with it: taken in Compute<T> directly
// (f32 for f16/bf16 tensors), as the CPU kernels and PyTorch take it.
template <typename T>
Compute<T> scalar_value(const Scalar& s) {
  return s.to<Compute<T>>();
}

__host__ __device__ __forceinline__ int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Threads per block of the elementwise and indexing kernels.
inline constexpr int kThreads = 256;

// Threads the device can hold resident at once (SMs times threads per SM),
// queried once per device.
int64_t resident_threads(int device);

// Blocks of `threads` for a grid-stride loop over `items`: one per `threads`
// items, capped at one full wave of resident blocks (more would only queue).
unsigned grid_size(int device, int64_t items, int threads = kThreads);

// Whether an elementwise op with dtype rule R has a kernel for element type T.
template <typename R, typename T>
constexpr bool has_kernel() {
  return kernel_exists<R, T, is_float_v<T>>();
}

}  // namespace ts::cuda
