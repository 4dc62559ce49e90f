// The MPI backend's host reduction loops: f16 and bf16 sums, maxima and
// scalings (in f32 lanes where the CPU has AVX2 and F16C, one element at a
// time under TS_CPU_ISA=baseline: both targets run this file) give exactly
// the bits of per-element f32 math rounded once, and f32/f64 sums those of
// scalar adds, at every length and alignment, in place too; max is the same
// both ways round for signed zeros, and integer sums wrap around.
#include "collectives/mpi/reduce_kernels.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/half.h"

namespace ts::collectives::mpi {
namespace {

constexpr int64_t kLengths[] = {0, 1, 7, 8, 9, 31, 63, 64, 65, 1000, 4099};

// Values that overflow f16 at the edges, tiny ones, and now and then a NaN
// (max must propagate it).
template <typename H>
std::vector<H> random_halves(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> value(-70000, 70000);
  std::vector<H> v(n);
  for (auto& x : v) {
    x = rng() % 97 == 0 ? H(std::numeric_limits<float>::quiet_NaN()) : H(value(rng) / (rng() % 2 ? 1 : 5000));
  }
  return v;
}

float max_with_nan(float x, float y) { return (std::isnan(x) || x > y) ? x : y; }

template <typename H>
void expect_16bit_reductions_round_f32_math(DType dtype) {
  std::mt19937 rng(7);
  for (int64_t n : kLengths) {
    for (int64_t offset : {0, 1, 3}) {
      const std::vector<H> a = random_halves<H>(rng, n + offset), b = random_halves<H>(rng, n + offset);
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
        std::vector<H> out(n + offset);
        reduce_into(out.data() + offset, a.data() + offset, b.data() + offset, n, dtype, op);
        for (int64_t i = offset; i < n + offset; ++i) {
          const float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
          const H expected(op == ReduceOp::kSum ? x + y : max_with_nan(x, y));
          ASSERT_EQ(out[i].bits, expected.bits) << dtype_name(dtype) << (op == ReduceOp::kSum ? " sum" : " max")
                                                << " n " << n << " offset " << offset << " i " << i;
        }
        // In place, as the ring does it.
        std::vector<H> in_place = a;
        reduce_into(in_place.data() + offset, in_place.data() + offset, b.data() + offset, n, dtype, op);
        for (int64_t i = offset; i < n + offset; ++i) ASSERT_EQ(in_place[i].bits, out[i].bits);
      }
      std::vector<H> scaled = a;
      scale(scaled.data() + offset, n, dtype, 1.0 / 3);
      for (int64_t i = offset; i < n + offset; ++i) {
        ASSERT_EQ(scaled[i].bits, H(static_cast<float>(a[i]) * static_cast<float>(1.0 / 3)).bits)
            << dtype_name(dtype) << " scale n " << n << " offset " << offset << " i " << i;
      }
    }
  }
}

TEST(ReduceKernelsTest, F16MatchesF32MathRoundedOnce) { expect_16bit_reductions_round_f32_math<Half>(DType::kF16); }

TEST(ReduceKernelsTest, BF16MatchesF32MathRoundedOnce) {
  expect_16bit_reductions_round_f32_math<BFloat16>(DType::kBF16);
}

template <typename T>
void expect_sums_match_scalar_adds(DType dtype) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<T> value(-1, 1);
  for (int64_t n : {0, 1, 7, 15, 16, 17, 33, 1000, 4099}) {
    for (int64_t offset : {0, 1, 3}) {
      std::vector<T> a(n + offset), b(n + offset), out(n + offset);
      for (auto& x : a) x = value(rng);
      for (auto& x : b) x = value(rng);
      reduce_into(out.data() + offset, a.data() + offset, b.data() + offset, n, dtype, ReduceOp::kSum);
      std::vector<T> in_place = a;
      reduce_into(in_place.data() + offset, in_place.data() + offset, b.data() + offset, n, dtype, ReduceOp::kSum);
      for (int64_t i = offset; i < n + offset; ++i) {
        ASSERT_EQ(out[i], a[i] + b[i]) << dtype_name(dtype) << " n " << n << " offset " << offset << " i " << i;
        ASSERT_EQ(in_place[i], out[i]) << dtype_name(dtype) << " in place, n " << n << " i " << i;
      }
    }
  }
}

TEST(ReduceKernelsTest, F32AndF64SumsMatchScalarAdds) {
  expect_sums_match_scalar_adds<float>(DType::kF32);
  expect_sums_match_scalar_adds<double>(DType::kF64);
}

// max(+0, -0) and max(-0, +0) are both +0, in every float type: recursive
// doubling combines a pair's values in opposite orders on its two ranks.
template <typename T>
void expect_max_of_signed_zeros_is_positive_zero(DType dtype) {
  const T zeros[] = {T(0.0f), T(-0.0f)};
  for (int first = 0; first < 2; ++first) {
    T out{};
    reduce_into(&out, &zeros[first], &zeros[1 - first], 1, dtype, ReduceOp::kMax);
    EXPECT_FALSE(std::signbit(static_cast<float>(out))) << dtype_name(dtype) << ", +0 first: " << (first == 0);
  }
}

TEST(ReduceKernelsTest, MaxOfSignedZerosIsTheSameBothWays) {
  expect_max_of_signed_zeros_is_positive_zero<float>(DType::kF32);
  expect_max_of_signed_zeros_is_positive_zero<double>(DType::kF64);
  expect_max_of_signed_zeros_is_positive_zero<Half>(DType::kF16);
  expect_max_of_signed_zeros_is_positive_zero<BFloat16>(DType::kBF16);
}

// Integer sums wrap around in two's complement, as NCCL's do (and without
// the undefined behaviour of a signed overflow, which the sanitizer build
// stops at).
TEST(ReduceKernelsTest, IntegerSumsWrapAround) {
  const int32_t a32 = std::numeric_limits<int32_t>::max();
  int32_t out32 = 0;
  reduce_into(&out32, &a32, &a32, 1, DType::kI32, ReduceOp::kSum);
  EXPECT_EQ(out32, -2);
  const int64_t a64 = std::numeric_limits<int64_t>::min();
  int64_t out64 = 1;
  reduce_into(&out64, &a64, &a64, 1, DType::kI64, ReduceOp::kSum);
  EXPECT_EQ(out64, 0);
  const uint8_t a8 = 200;
  uint8_t out8 = 0;
  reduce_into(&out8, &a8, &a8, 1, DType::kU8, ReduceOp::kSum);
  EXPECT_EQ(out8, 144);
}

}  // namespace
}  // namespace ts::collectives::mpi
