#include "tensor/cpu/half_convert.h"

#include <cpuid.h>

#include "tensor/cpu/isa.h"

namespace ts::cpu {

bool has_avx2_f16c() {
  // F16C from CPUID leaf 1 (ECX bit 29): clang has no "f16c" for
  // __builtin_cpu_supports. Its YMM state is AVX2's, which use_avx2 checks.
  static const bool available = [] {
    unsigned eax, ebx, ecx, edx;
    return use_avx2() && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
  return available;
}

namespace {

template <typename H>
TS_AVX2_F16C void widen_lanes(const H* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, widen8(in + i));
  for (; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

template <typename H>
TS_AVX2_F16C void narrow_lanes(const float* in, H* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) narrow8(_mm256_loadu_ps(in + i), out + i);
  for (; i < n; ++i) out[i] = H(in[i]);
}

template <typename H>
void widen(const H* in, float* out, int64_t n) {
  if (has_avx2_f16c()) return widen_lanes(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

template <typename H>
void narrow(const float* in, H* out, int64_t n) {
  if (has_avx2_f16c()) return narrow_lanes(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = H(in[i]);
}

}  // namespace

void f16_to_f32(const Half* in, float* out, int64_t n) { widen(in, out, n); }
void f32_to_f16(const float* in, Half* out, int64_t n) { narrow(in, out, n); }
void bf16_to_f32(const BFloat16* in, float* out, int64_t n) { widen(in, out, n); }
void f32_to_bf16(const float* in, BFloat16* out, int64_t n) { narrow(in, out, n); }

}  // namespace ts::cpu
