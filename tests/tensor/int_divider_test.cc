// IntDivider against the hardware division: divisors 1 and 2, powers of two
// and their neighbours, small odd ones, random ones of every magnitude up to
// 2^63 - 1, each with dividends at the multiples of the divisor and next to
// them, at the top of the range and at random; and the error for a
// non-positive divisor.
#include "tensor/int_divider.h"

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

void expect_exact(int64_t d, const std::vector<int64_t>& dividends) {
  const IntDivider by(d);
  EXPECT_EQ(by.divisor(), d);
  for (const int64_t n : dividends) ASSERT_EQ(by.div(n), n / d) << n << " / " << d;
}

class IntDividerTest : public ::ts::testing::SeededTest {};

TEST_F(IntDividerTest, MatchesDivisionEverywhere) {
  std::vector<int64_t> divisors = {1, 2, 3, 5, 6, 7, 9, 10, 11, 25, 49, 96, 255, 641, 1000, 50176, 65535, 65537};
  for (int b = 1; b < 63; ++b) {
    for (const int64_t delta : {-1, 0, 1}) divisors.push_back((int64_t{1} << b) + delta);
  }
  divisors.push_back(kMax);
  std::mt19937_64& gen = rng();
  // 20 of each bit length: in [2^(b - 1), 2^b - 1].
  for (int b = 1; b <= 63; ++b) {
    std::uniform_int_distribution<int64_t> of_length(int64_t{1} << (b - 1), kMax >> (63 - b));
    for (int k = 0; k < 20; ++k) divisors.push_back(of_length(gen));
  }
  for (const int64_t d : divisors) {
    std::vector<int64_t> dividends = {0, 1, kMax, kMax - 1, kMax - d + 1};
    for (const int64_t q : {int64_t{1}, int64_t{2}, int64_t{3}, kMax / d / 2, kMax / d}) {
      if (q > kMax / d) continue;
      for (const int64_t delta : {-1, 0, 1}) {
        if (delta > 0 && q * d > kMax - delta) continue;  // past int64_t
        const int64_t n = q * d + delta;
        if (n >= 0) dividends.push_back(n);
      }
    }
    for (int k = 0; k < 200; ++k) dividends.push_back(std::uniform_int_distribution<int64_t>(0, kMax)(gen));
    for (int k = 0; k < 200; ++k) dividends.push_back(std::uniform_int_distribution<int64_t>(0, 1 << 20)(gen));
    expect_exact(d, dividends);
  }
}

TEST(IntDividerErrorTest, NonPositiveDivisorsAreErrors) {
  ::ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"IntDivider", "0"}, [] { IntDivider(0); });
  ::ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"-3"}, [] { IntDivider(-3); });
}

}  // namespace
}  // namespace ts
