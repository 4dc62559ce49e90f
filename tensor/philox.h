// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a counter-based generator, so the numbers for element i are a
// pure function of (seed, counter) and CPU and CUDA kernels produce the same
// stream whatever their parallel decomposition. One call yields four 32-bit
// words; an op consumes one counter per group of elements (four for 32-bit
// types, two for f64).
#pragma once

#include <math.h>

#include <cstdint>

#include "tensor/host_device.h"

namespace ts {

struct PhiloxKey {
  uint64_t seed = 0;
  uint64_t offset = 0;  // counter of the op's first group
};

struct Philox4 {
  uint32_t v[4];
};

namespace philox_internal {
TS_HOST_DEVICE void mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(product >> 32);
  *lo = static_cast<uint32_t>(product);
}
}  // namespace philox_internal

// The raw generator: 128-bit counter, 64-bit key, ten rounds.
TS_HOST_DEVICE Philox4 philox4x32_10(Philox4 counter, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t c0 = counter.v[0], c1 = counter.v[1], c2 = counter.v[2], c3 = counter.v[3];
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_internal::mulhilo(kMul0, c0, &hi0, &lo0);
    philox_internal::mulhilo(kMul1, c2, &hi1, &lo1);
    const uint32_t n0 = hi1 ^ c1 ^ key0;
    const uint32_t n2 = hi0 ^ c3 ^ key1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// The four words for group `group` of an op keyed by `key`.
TS_HOST_DEVICE Philox4 philox_group(PhiloxKey key, uint64_t group) {
  const uint64_t counter = key.offset + group;
  return philox4x32_10(Philox4{{static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u, 0u}},
                       static_cast<uint32_t>(key.seed), static_cast<uint32_t>(key.seed >> 32));
}

// Uniform in [0, 1) from the top `bits` bits of x: every value is exactly
// representable with a `bits`-bit significand, so rounding to the target
// precision never yields 1 (24 for f32, 11 for f16, 8 for bf16).
TS_HOST_DEVICE float uniform_from_bits(uint32_t x, int bits) {
  return static_cast<float>(x >> (32 - bits)) * (1.0f / static_cast<float>(1u << bits));
}
TS_HOST_DEVICE double uniform_f64(uint32_t hi, uint32_t lo) {
  return static_cast<double>(((static_cast<uint64_t>(hi) << 32) | lo) >> 11) * 0x1.0p-53;
}

// a*b + c rounded twice, never fused, so host and device agree bit for bit.
TS_HOST_DEVICE float mul_add_unfused(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(a, b), c);
#else
  return a * b + c;  // the CPU kernels build with -ffp-contract=off
#endif
}
TS_HOST_DEVICE double mul_add_unfused(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(__dmul_rn(a, b), c);
#else
  return a * b + c;
#endif
}

// Box-Muller: two standard normals from two uniform words.
TS_HOST_DEVICE void normal_pair_f32(uint32_t x0, uint32_t x1, float* z0, float* z1) {
  const float u0 = 1.0f - uniform_from_bits(x0, 24);  // (0, 1]: log stays finite
  const float u1 = uniform_from_bits(x1, 24);
  const float r = sqrtf(-2.0f * logf(u0));
  const float theta = 6.2831853071795864769f * u1;
  *z0 = r * cosf(theta);
  *z1 = r * sinf(theta);
}
TS_HOST_DEVICE void normal_pair_f64(Philox4 w, double* z0, double* z1) {
  const double u0 = 1.0 - uniform_f64(w.v[0], w.v[1]);
  const double u1 = uniform_f64(w.v[2], w.v[3]);
  const double r = sqrt(-2.0 * log(u0));
  const double theta = 6.2831853071795864769 * u1;
  *z0 = r * cos(theta);
  *z1 = r * sin(theta);
}

// The values of one group, as every kernel draws them: four uniforms with
// `bits` significant bits or four standard normals for 32-bit-computed
// dtypes (f32, f16, bf16); two of each for f64.
TS_HOST_DEVICE void uniform4(Philox4 w, int bits, float out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = uniform_from_bits(w.v[i], bits);
}
TS_HOST_DEVICE void normal4(Philox4 w, float out[4]) {
  normal_pair_f32(w.v[0], w.v[1], &out[0], &out[1]);
  normal_pair_f32(w.v[2], w.v[3], &out[2], &out[3]);
}
TS_HOST_DEVICE void uniform2_f64(Philox4 w, double out[2]) {
  out[0] = uniform_f64(w.v[0], w.v[1]);
  out[1] = uniform_f64(w.v[2], w.v[3]);
}
TS_HOST_DEVICE void normal2_f64(Philox4 w, double out[2]) { normal_pair_f64(w, &out[0], &out[1]); }

}  // namespace ts
