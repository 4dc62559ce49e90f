// DType metadata and promotion; f16/bf16 conversions checked exhaustively
// against conversions computed in double.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "tensor/dtype.h"
#include "tensor/scalar.h"

namespace ts {
namespace {

TEST(DTypeTest, SizesAndNamesRoundTrip) {
  for (DType d : kAllDTypes) {
    auto parsed = parse_dtype(dtype_name(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(dtype_size(DType::kBF16), 2);
  EXPECT_EQ(dtype_size(DType::kI64), 8);
  EXPECT_EQ(dtype_size(DType::kBool), 1);
  auto bad = parse_dtype("float32");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("float32"), std::string::npos);
}

TEST(DTypeTest, PromotionIsSymmetricAndFollowsCategories) {
  for (DType a : kAllDTypes) {
    for (DType b : kAllDTypes) {
      const DType p = promote_types(a, b);
      EXPECT_EQ(p, promote_types(b, a));
      EXPECT_EQ(promote_types(p, a), p);  // p holds a
    }
  }
  EXPECT_EQ(promote_types(DType::kU8, DType::kI32), DType::kI32);
  EXPECT_EQ(promote_types(DType::kI64, DType::kF16), DType::kF16);
  EXPECT_EQ(promote_types(DType::kBF16, DType::kF16), DType::kF32);
  EXPECT_EQ(promote_types(DType::kBool, DType::kU8), DType::kU8);
  EXPECT_EQ(promote_with_scalar(DType::kU8, Scalar(300)), DType::kU8);
  EXPECT_EQ(promote_with_scalar(DType::kI64, Scalar(0.5)), DType::kF32);
  EXPECT_EQ(promote_with_scalar(DType::kBool, Scalar(2)), DType::kI64);
}

float f32_of_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Round-to-nearest-even of a double to a binary float format with `mant`
// explicit mantissa bits and exponent range [emin, emax], done in double.
double round_to_format(double x, int mant, int emin, int emax) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  int e;
  std::frexp(std::abs(x), &e);  // |x| = f * 2^e, f in [0.5, 1)
  e -= 1;                       // |x| = 1.f * 2^e
  if (e < emin) e = emin;       // subnormal spacing
  const double quantum = std::ldexp(1.0, e - mant);
  double r = std::nearbyint(x / quantum) * quantum;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -mant), emax);
  // Beyond max_finite + half a quantum rounds to infinity.
  if (std::abs(r) > max_finite) r = std::copysign(INFINITY, x);
  return r;
}

TEST(HalfTest, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const Half h = Half::from_bits(static_cast<uint16_t>(bits));
    const float f = h;
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(Half(f))));
      continue;
    }
    EXPECT_EQ(Half(f).bits, bits) << "f16 bits " << bits;
  }
}

TEST(HalfTest, FloatToHalfRoundsToNearestEven) {
  // Every float whose exponent is in or near half's range, sampled densely.
  for (uint64_t b = 0x33000000u; b <= 0x47800000u; b += 997) {
    for (float sign : {1.f, -1.f}) {
      const float f = sign * f32_of_bits(static_cast<uint32_t>(b));
      EXPECT_EQ(static_cast<double>(static_cast<float>(Half(f))), round_to_format(f, 10, -14, 15)) << f;
    }
  }
  EXPECT_EQ(static_cast<float>(Half(65520.f)), INFINITY);  // halfway to overflow rounds up
  EXPECT_EQ(static_cast<float>(Half(65519.f)), 65504.f);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
}

TEST(BFloat16Test, FloatToBFloat16RoundsToNearestEven) {
  for (uint64_t b = 0; b < 0x7F800000u; b += 4099) {
    for (float sign : {1.f, -1.f}) {
      const float f = sign * f32_of_bits(static_cast<uint32_t>(b));
      EXPECT_EQ(static_cast<double>(static_cast<float>(BFloat16(f))), round_to_format(f, 7, -126, 127)) << f;
    }
  }
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(NAN))));
  EXPECT_EQ(static_cast<float>(BFloat16(INFINITY)), INFINITY);
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const BFloat16 h = BFloat16::from_bits(static_cast<uint16_t>(bits));
    if (!std::isnan(static_cast<float>(h))) {
      EXPECT_EQ(BFloat16(static_cast<float>(h)).bits, bits);
    }
  }
}

}  // namespace
}  // namespace ts
