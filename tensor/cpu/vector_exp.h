// exp in double from adds, multiplies and bit operations only, so that a
// loop calling it vectorizes (glibc's exp is a call per element: in the
// cross-entropy over AWD-LSTM's 33,278 words it was 12% of the training
// step). Within 1.2 ulp of the exact value over the whole range (the
// Horner steps round separately: no FMA), subnormal results, overflow to
// inf, exp(-inf) = 0 and NaN included, and the same bits in the baseline and
// AVX2 clones (tensor/cpu/isa.h). The vectorizer needs -fno-trapping-math to
// turn the clamps into selects.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ts::cpu {

// 2^e for e in [-1022, 1023], from its exponent bits.
inline double power_of_two(int64_t e) {
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

inline double exp_lanes(double x) {
  // Beyond these exp is 0 (below half the smallest subnormal) or inf; the
  // clamp keeps k, below, within reach of two factors of 2^k. NaN passes
  // through both comparisons.
  const double clamped = std::min(std::max(x, -746.0), 709.8);
  // k = round(x / ln 2), by adding 1.5 * 2^52: the sum's low mantissa bits
  // hold k (two's complement), and subtracting it back leaves k as a double.
  constexpr double kShifter = 0x1.8p52;
  const double shifted = clamped * 1.4426950408889634 + kShifter;
  const double k = shifted - kShifter;
  // r = x - k ln 2 with ln 2 split in two (Cody and Waite): k * kLn2Hi is
  // exact (kLn2Hi has 32 significant bits, |k| < 2^11), so |r| <= ln2 / 2
  // carries no cancellation error.
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double r = (clamped - k * kLn2Hi) - k * kLn2Lo;
  // exp(r) by its Taylor series to r^13 / 13!: the first term left out is
  // below 5e-18 of the result for |r| <= ln2 / 2.
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // p * 2^k as two factors 2^(k/2) and 2^(k - k/2), each a normal double,
  // so that subnormal results round once and overflow gives inf.
  int64_t shifted_bits, shifter_bits;
  std::memcpy(&shifted_bits, &shifted, sizeof(shifted_bits));
  std::memcpy(&shifter_bits, &kShifter, sizeof(shifter_bits));
  const int64_t ki = shifted_bits - shifter_bits;
  const int64_t half = ki / 2;
  return p * power_of_two(half) * power_of_two(ki - half);
}

}  // namespace ts::cpu
