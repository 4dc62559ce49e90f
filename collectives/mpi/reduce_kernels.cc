#include "collectives/mpi/reduce_kernels.h"

#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "tensor/cpu/dispatch.h"
#include "tensor/cpu/f32_blocks.h"

namespace ts::collectives::mpi {

namespace {

// dst[i] = f(a[i], b[i]) computed in cpu::Acc<T> (f32 for f16/bf16, rounded
// once). 16-bit floats go through the CPU backend's f32 lanes where the CPU
// has them: converting one element at a time in software would make the
// reduction, not the transfer, the bottleneck. Both round to nearest even,
// so the bits are the same either way.
template <typename T, typename F>
void combine(void* dst, const void* a, const void* b, int64_t n, F f) {
  T* d = static_cast<T*>(dst);  // may alias x
  const T* x = static_cast<const T*>(a);
  const T* __restrict y = static_cast<const T*>(b);
  if constexpr (cpu::is_16bit_float_v<T>) {
    if (cpu::in_f32_blocks(d, n, f, x, y)) return;
  }
  for (int64_t i = 0; i < n; ++i) d[i] = cpu::store<T>(f(cpu::load(x[i]), cpu::load(y[i])));
}

// The larger of x and y. NaN wins, as in NCCL and torch. Of +0 and -0, +0
// wins whichever comes first, so that max(x, y) and max(y, x) have the same
// bits: recursive doubling combines the two halves in opposite orders on
// the two ranks of a pair, which must end bitwise alike.
template <typename V>
V max_of(V x, V y) {
  if (x != x) return x;
  if (y != y) return y;
  if constexpr (std::is_floating_point_v<V>) {
    if (x == y) return std::signbit(x) ? y : x;
  }
  return x > y ? x : y;
}

// x + y; integers wrap around in two's complement, as in NCCL (the sum is
// formed unsigned: a signed overflow is undefined behaviour).
template <typename V>
V sum_of(V x, V y) {
  if constexpr (std::is_integral_v<V>) {
    using U = std::make_unsigned_t<V>;
    return static_cast<V>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return x + y;
  }
}

template <typename T>
void reduce_typed(void* dst, const void* a, const void* b, int64_t n, ReduceOp op) {
  if (op == ReduceOp::kMax) {
    combine<T>(dst, a, b, n, [](auto x, auto y) { return max_of(x, y); });
  } else {
    combine<T>(dst, a, b, n, [](auto x, auto y) { return sum_of(x, y); });
  }
}

template <typename T>
void scale_typed(void* data, int64_t n, double factor) {
  T* d = static_cast<T*>(data);
  const cpu::Acc<T> f = static_cast<cpu::Acc<T>>(factor);
  if constexpr (cpu::is_16bit_float_v<T>) {
    const auto times_f = [f](float x) { return x * f; };
    if (cpu::in_f32_blocks(d, n, times_f, d)) return;
  }
  for (int64_t i = 0; i < n; ++i) d[i] = cpu::store<T>(cpu::load(d[i]) * f);
}

}  // namespace

void reduce_into(void* dst, const void* a, const void* b, int64_t n, DType dtype, ReduceOp op) {
  switch (dtype) {
    // A bool sum is a logical or: max of 0/1 bytes.
    case DType::kBool:
      return reduce_typed<uint8_t>(dst, a, b, n, ReduceOp::kMax);
    case DType::kU8:
      return reduce_typed<uint8_t>(dst, a, b, n, op);
    case DType::kI32:
      return reduce_typed<int32_t>(dst, a, b, n, op);
    case DType::kI64:
      return reduce_typed<int64_t>(dst, a, b, n, op);
    case DType::kF16:
      return reduce_typed<Half>(dst, a, b, n, op);
    case DType::kBF16:
      return reduce_typed<BFloat16>(dst, a, b, n, op);
    case DType::kF32:
      return reduce_typed<float>(dst, a, b, n, op);
    case DType::kF64:
      return reduce_typed<double>(dst, a, b, n, op);
  }
  std::abort();  // every DType is handled above
}

void scale(void* data, int64_t n, DType dtype, double factor) {
  switch (dtype) {
    case DType::kF16:
      return scale_typed<Half>(data, n, factor);
    case DType::kBF16:
      return scale_typed<BFloat16>(data, n, factor);
    case DType::kF32:
      return scale_typed<float>(data, n, factor);
    case DType::kF64:
      return scale_typed<double>(data, n, factor);
    default:
      std::abort();  // callers check the dtype is floating (check_reduce_dtype)
  }
}

}  // namespace ts::collectives::mpi
