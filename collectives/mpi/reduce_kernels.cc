#include "collectives/mpi/reduce_kernels.h"

#include <algorithm>
#include <cstdlib>

#include "tensor/half.h"

namespace ts::collectives::mpi {

namespace {

// Reduced floats are loaded as f32, combined, and rounded back.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T, typename F>
void combine(void* dst, const void* a, const void* b, int64_t n, F f) {
  T* __restrict d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* __restrict y = static_cast<const T*>(b);
  for (int64_t i = 0; i < n; ++i) {
    d[i] = static_cast<T>(f(static_cast<Compute<T>>(x[i]), static_cast<Compute<T>>(y[i])));
  }
}

template <typename T>
void reduce_typed(void* dst, const void* a, const void* b, int64_t n, ReduceOp op) {
  if (op == ReduceOp::kMax) {
    // NaN wins, as in NCCL and torch.
    combine<T>(dst, a, b, n, [](auto x, auto y) { return (x != x || x > y) ? x : y; });
  } else {
    combine<T>(dst, a, b, n, [](auto x, auto y) { return x + y; });
  }
}

template <typename T>
void scale_typed(void* data, int64_t n, double factor) {
  T* d = static_cast<T*>(data);
  const Compute<T> f = static_cast<Compute<T>>(factor);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(static_cast<Compute<T>>(d[i]) * f);
}

}  // namespace

void reduce_into(void* dst, const void* a, const void* b, int64_t n, DType dtype, ReduceOp op) {
  switch (dtype) {
    // A bool sum is a logical or: max of 0/1 bytes.
    case DType::kBool: return reduce_typed<uint8_t>(dst, a, b, n, ReduceOp::kMax);
    case DType::kU8: return reduce_typed<uint8_t>(dst, a, b, n, op);
    case DType::kI32: return reduce_typed<int32_t>(dst, a, b, n, op);
    case DType::kI64: return reduce_typed<int64_t>(dst, a, b, n, op);
    case DType::kF16: return reduce_typed<Half>(dst, a, b, n, op);
    case DType::kBF16: return reduce_typed<BFloat16>(dst, a, b, n, op);
    case DType::kF32: return reduce_typed<float>(dst, a, b, n, op);
    case DType::kF64: return reduce_typed<double>(dst, a, b, n, op);
  }
  std::abort();  // every DType is handled above
}

void scale(void* data, int64_t n, DType dtype, double factor) {
  switch (dtype) {
    case DType::kF16: return scale_typed<Half>(data, n, factor);
    case DType::kBF16: return scale_typed<BFloat16>(data, n, factor);
    case DType::kF32: return scale_typed<float>(data, n, factor);
    case DType::kF64: return scale_typed<double>(data, n, factor);
    default: std::abort();  // callers check the dtype is floating (check_reduce_dtype)
  }
}

}  // namespace ts::collectives::mpi
