// 16-bit float <-> f32 conversion in vector lanes: f16 with the F16C
// instructions, bf16 with AVX2's integer lanes, both chosen at run time; and
// contiguous arrays converted with them. The per-element bit arithmetic of
// tensor/half.h does not vectorize, and converting is most of what 16-bit
// training costs on the CPU, which computes those dtypes in f32. Results are
// tensor/half.h's bits for every value but NaN: round to nearest even,
// subnormals kept. A NaN stays a NaN of its sign, but F16C keeps the top
// bits of its payload where half.h makes it the quiet NaN 0x7E00, so the
// bits of a converted NaN depend on the CPU and on where it lies.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "tensor/half.h"

namespace ts::cpu {

// Whether this CPU has AVX2 and F16C (every x86-64 CPU since Intel's Haswell,
// 2013, and AMD's Zen) and use_avx2() (tensor/cpu/isa.h). Without them
// 16-bit floats convert one at a time.
bool has_avx2_f16c();

// A function compiled for AVX2 and F16C: call it only where has_avx2_f16c().
// Not FMA, which would round products differently from the scalar loops.
#define TS_AVX2_F16C __attribute__((target("avx2,f16c")))

// Eight 16-bit floats, unaligned, into f32 lanes.
TS_AVX2_F16C inline __m256 widen8(const Half* from) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from)));
}
TS_AVX2_F16C inline __m256 widen8(const BFloat16* from) {
  const __m256i bits = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(bits, 16));
}

// Eight f32 lanes rounded into 16-bit floats, unaligned.
TS_AVX2_F16C inline void narrow8(__m256 v, Half* to) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(to), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
TS_AVX2_F16C inline void narrow8(__m256 v, BFloat16* to) {
  // half_internal::bf16_bits_from_f32 in lanes: a NaN keeps its sign and
  // top payload bits and is quieted; everything else rounds to nearest even
  // on the word's top half.
  const __m256i w = _mm256_castps_si256(v);
  const __m256i high = _mm256_srli_epi32(w, 16);
  const __m256i odd = _mm256_and_si256(high, _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(w, _mm256_set1_epi32(0x7FFF)), odd), 16);
  const __m256i quiet_nan = _mm256_or_si256(high, _mm256_set1_epi32(0x0040));
  const __m256i is_nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x7FFFFFFF)), _mm256_set1_epi32(0x7F800000));
  const __m256i bits = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
  // Every lane is below 2^16, so packing with unsigned saturation keeps it.
  _mm_storeu_si128(reinterpret_cast<__m128i*>(to),
                   _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1)));
}

// n contiguous elements, on any CPU (the lanes above where it has them).
void f16_to_f32(const Half* in, float* out, int64_t n);
void f32_to_f16(const float* in, Half* out, int64_t n);
void bf16_to_f32(const BFloat16* in, float* out, int64_t n);
void f32_to_bf16(const float* in, BFloat16* out, int64_t n);

}  // namespace ts::cpu
