#include "collectives/mpi/reduce_kernels.h"

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "tensor/half.h"

namespace ts::collectives::mpi {

namespace {

#if defined(__x86_64__)
// f16 sums with the F16C conversion instructions, 8 elements at a time: the
// per-element software conversion would make the reduction, not the
// transfer, the bottleneck. Both round to nearest even, so results are the
// same bits. Returns how many leading elements it did.
__attribute__((target("avx,f16c"))) int64_t add_f16_vectorized(Half* dst, const Half* a, const Half* b, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}

int64_t add_f16_fast(Half* dst, const Half* a, const Half* b, int64_t n) {
  static const bool has_f16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return has_f16c ? add_f16_vectorized(dst, a, b, n) : 0;
}
#else
int64_t add_f16_fast(Half*, const Half*, const Half*, int64_t) { return 0; }
#endif

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
  if constexpr (std::is_same_v<T, Half>) {
    if (op != ReduceOp::kMax) {
      const int64_t done =
          add_f16_fast(static_cast<Half*>(dst), static_cast<const Half*>(a), static_cast<const Half*>(b), n);
      dst = static_cast<Half*>(dst) + done;
      a = static_cast<const Half*>(a) + done;
      b = static_cast<const Half*>(b) + done;
      n -= done;
    }
  }
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
