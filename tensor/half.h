// 16-bit floating-point storage types for host code: IEEE binary16 (Half) and
// bfloat16 (BFloat16). Arithmetic happens in float; conversions round to
// nearest even and keep NaN and infinity. CUDA kernels use __half and
// __nv_bfloat16, which share these bit layouts.
#pragma once

#include <bit>
#include <cstdint>

namespace ts {

namespace half_internal {

inline float f32_from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }
inline uint32_t bits_from_f32(float f) { return std::bit_cast<uint32_t>(f); }

// Branch-light conversions after the FP16 library (Maratyszcza): the float
// unit does the rounding by adding a bias that places the half's last mantissa
// bit at the float's rounding position.
inline uint16_t f16_bits_from_f32(float f) {
  const float scale_to_inf = 0x1.0p+112f;
  const float scale_to_zero = 0x1.0p-110f;
  float base = (__builtin_fabsf(f) * scale_to_inf) * scale_to_zero;
  const uint32_t w = bits_from_f32(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = f32_from_bits((bias >> 1) + 0x07800000u) + base;
  const uint32_t b = bits_from_f32(base);
  const uint32_t exp_bits = (b >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = b & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

inline float f32_from_f16_bits(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const uint32_t exp_offset = 0xE0u << 23;
  const float normalized = f32_from_bits((two_w >> 4) + exp_offset) * 0x1.0p-112f;
  const float denormalized = f32_from_bits((two_w >> 17) | (126u << 23)) - 0.5f;
  const uint32_t denormalized_cutoff = 1u << 27;
  return f32_from_bits(sign | (two_w < denormalized_cutoff ? bits_from_f32(denormalized) : bits_from_f32(normalized)));
}

inline uint16_t bf16_bits_from_f32(float f) {
  const uint32_t w = bits_from_f32(f);
  if ((w & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((w >> 16) | 0x0040u);  // quiet NaN
  const uint32_t rounding_bias = 0x7FFFu + ((w >> 16) & 1u);
  return static_cast<uint16_t>((w + rounding_bias) >> 16);
}

inline float f32_from_bf16_bits(uint16_t h) { return f32_from_bits(static_cast<uint32_t>(h) << 16); }

}  // namespace half_internal

struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(half_internal::f16_bits_from_f32(f)) {}
  operator float() const { return half_internal::f32_from_f16_bits(bits); }
  static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(half_internal::bf16_bits_from_f32(f)) {}
  operator float() const { return half_internal::f32_from_bf16_bits(bits); }
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace ts
