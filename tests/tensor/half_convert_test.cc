// The vectorized conversions of the CPU backend (F16C and AVX2 lanes) give
// exactly what tensor/half.h's scalar conversions give: every one of the
// 65,536 f16 values into f32, and into f16 floats around every f16 value
// (ties to even, subnormals, the overflow to inf, inf and NaN), at lengths
// that exercise the 8-wide loop and its tail; the bf16 conversions likewise,
// NaN payloads included. The conversion op takes that path for contiguous
// data, and elementwise f16 and bf16 ops that run through f32 blocks give the
// bits of the element-by-element loop.
#include "tensor/cpu/half_convert.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/ops.h"

namespace ts::cpu {
namespace {

std::vector<Half> every_half() {
  std::vector<Half> all(65536);
  for (uint32_t b = 0; b < 65536; ++b) all[b] = Half::from_bits(static_cast<uint16_t>(b));
  return all;
}

TEST(HalfConvertTest, F16ToF32MatchesTheScalarConversionForEveryValue) {
  if (!has_avx2_f16c()) GTEST_SKIP() << "this CPU has no AVX2 and F16C: the scalar conversion is all there is";
  const std::vector<Half> all = every_half();
  std::vector<float> out(all.size());
  f16_to_f32(all.data(), out.data(), static_cast<int64_t>(all.size()));
  for (size_t b = 0; b < all.size(); ++b) {
    const float want = static_cast<float>(all[b]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(out[b])) << b;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(out[b]), std::bit_cast<uint32_t>(want)) << "bits " << b;
    }
  }
}

TEST(HalfConvertTest, F32ToF16MatchesTheScalarConversionAroundEveryValue) {
  if (!has_avx2_f16c()) GTEST_SKIP() << "this CPU has no AVX2 and F16C: the scalar conversion is all there is";
  // Each f16 value, the floats just beside it, and the halfway points to its
  // neighbours (ties go to even); beyond the largest f16 (overflow to inf).
  std::vector<float> in;
  for (const Half& h : every_half()) {
    const float f = static_cast<float>(h);
    if (std::isnan(f)) continue;
    const Half next = Half::from_bits(static_cast<uint16_t>(h.bits + 1));
    in.insert(in.end(), {f, std::nextafter(f, 0.0f), std::nextafter(f, 1e30f), std::nextafter(f, -1e30f)});
    if (std::isfinite(static_cast<float>(next))) in.push_back((f + static_cast<float>(next)) / 2);
  }
  in.insert(in.end(), {65520.0f, 65519.99f, 1e10f, -1e10f, std::numeric_limits<float>::infinity(),
                       std::numeric_limits<float>::quiet_NaN(), 1e-10f, -1e-10f, 0.0f, -0.0f});
  for (const size_t length : {in.size(), size_t{7}, size_t{9}}) {
    std::vector<Half> out(length);
    f32_to_f16(in.data(), out.data(), static_cast<int64_t>(length));
    for (size_t i = 0; i < length; ++i) {
      const Half want(in[i]);
      if (std::isnan(in[i])) {
        EXPECT_TRUE(std::isnan(static_cast<float>(out[i]))) << i;
      } else {
        EXPECT_EQ(out[i].bits, want.bits) << "from " << in[i];
      }
    }
  }
}

TEST(HalfConvertTest, TheConversionOpAgreesWithBothPaths) {
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i)) * 70000.0f;
  const Tensor f32 = from_vector<float>(values, {1000});
  const Tensor f16 = to(f32, DType::kF16);
  const std::vector<float> back = to_vector<float>(to(f16, DType::kF32));
  for (size_t i = 0; i < values.size(); ++i) {
    const float want = static_cast<float>(Half(values[i]));
    EXPECT_EQ(back[i], want) << values[i];
  }
}

TEST(HalfConvertTest, Bf16MatchesTheScalarConversion) {
  // First, filling a vector's lanes: NaNs of both signs, quiet and
  // signalling, with payloads. Each keeps its sign and top payload bits and
  // comes out quiet, as the scalar conversion makes it.
  std::vector<float> in;
  for (const uint32_t nan_bits :
       {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF812345u, 0x7FBFFFFFu, 0x7FFFFFFFu, 0xFF800001u, 0x7FA00000u}) {
    float nan;
    std::memcpy(&nan, &nan_bits, sizeof nan);
    in.push_back(nan);
  }
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = static_cast<float>(BFloat16::from_bits(static_cast<uint16_t>(b)));
    if (std::isnan(f)) continue;
    in.insert(in.end(), {f, std::nextafter(f, 0.0f), std::nextafter(f, 1e38f)});
  }
  std::vector<BFloat16> narrow(in.size());
  f32_to_bf16(in.data(), narrow.data(), static_cast<int64_t>(in.size()));
  std::vector<float> wide(in.size());
  bf16_to_f32(narrow.data(), wide.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    const BFloat16 want(in[i]);
    EXPECT_EQ(narrow[i].bits, want.bits) << "from " << in[i];
    if (std::isnan(in[i])) {
      EXPECT_TRUE(std::isnan(wide[i]));
      continue;
    }
    EXPECT_EQ(wide[i], static_cast<float>(want)) << "from " << in[i];
  }
}

// Contiguous f16 and bf16 operands go through f32 blocks; a transposed view
// of the same values takes the element-by-element loop. Both give the same
// bits.
class BlockTest : public ::testing::TestWithParam<DType> {};

TEST_P(BlockTest, ElementwiseOpsGiveTheSameBitsThroughBlocks) {
  const DType dtype = GetParam();
  std::vector<float> values(37 * 41);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
  const Tensor a = to(from_vector<float>(values, {37, 41}), dtype);
  const Tensor b = to(from_vector<float>(values, {37, 41}) * 0.5 + 0.25, dtype);
  // The same values, stored transposed: views that are not contiguous.
  const Tensor at = contiguous(a.transpose(0, 1)).transpose(0, 1);
  const Tensor bt = contiguous(b.transpose(0, 1)).transpose(0, 1);
  ASSERT_FALSE(at.is_contiguous());
  // f32 holds every 16-bit value exactly: equal floats are equal bits.
  const auto bits = [](const Tensor& t) { return to_vector<float>(t); };
  EXPECT_EQ(bits(exp(a)), bits(exp(at)));
  EXPECT_EQ(bits(tanh(a)), bits(tanh(at)));
  EXPECT_EQ(bits(relu(a)), bits(relu(at)));
  EXPECT_EQ(bits(a * b), bits(at * bt));
  EXPECT_EQ(bits(a / 3.0), bits(at / 3.0));
  EXPECT_EQ(bits(1.5 - a), bits(1.5 - at));
  EXPECT_EQ(bits(unary_grad(UnaryOp::kTanh, b, a, tanh(a))), bits(unary_grad(UnaryOp::kTanh, bt, at, tanh(at))));
}

INSTANTIATE_TEST_SUITE_P(F16AndBf16, BlockTest, ::testing::Values(DType::kF16, DType::kBF16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace ts::cpu
