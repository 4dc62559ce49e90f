// Creation ops (fills truncating toward zero, a value the type cannot hold
// an error)
// and the Philox generator: known-answer vectors, determinism, disjoint
// streams per op, the moments of each distribution and a Kolmogorov-Smirnov
// test of each against its exact CDF.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "tensor/philox.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::expect_equal;
using testing::Ref;
using testing::ref_of;

TEST(CreationTest, FullZerosOnesArange) {
  Tensor z = zeros({2, 2}, {DType::kI32});
  expect_equal(z, Ref{{2, 2}, {0, 0, 0, 0}});
  Tensor o = ones({3}, {DType::kBF16});
  expect_equal(o, Ref{{3}, {1, 1, 1}});
  Tensor f = full({2}, 2.5, {DType::kF16});
  expect_equal(f, Ref{{2}, {2.5, 2.5}});
  Tensor a = arange(1, 2, 0.25, {DType::kF64});
  expect_equal(a, Ref{{4}, {1, 1.25, 1.5, 1.75}});
  Tensor b = arange(5, 0, -2, {DType::kI64});
  expect_equal(b, Ref{{3}, {5, 3, 1}});
  Tensor e = arange(3, 3);
  EXPECT_EQ(e.numel(), 0);
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"arange"}, [&] { arange(0, 5, 0); });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"arange"}, [&] { arange(0, 5, -1); });
}

TEST(CreationTest, AFloatFillOfAnIntegerTensorTruncatesTowardZero) {
  for (const double v : {2.7, -2.7, 0.5, -0.5, 255.9}) {
    SCOPED_TRACE(v);
    for (const DType dtype : {DType::kI32, DType::kI64, DType::kU8}) {
      if (dtype == DType::kU8 && v <= -1) continue;
      SCOPED_TRACE(dtype_name(dtype));
      EXPECT_EQ(to_vector<int64_t>(to(full({1}, v, {dtype}), DType::kI64)),
                std::vector<int64_t>{static_cast<int64_t>(std::trunc(v))});
    }
  }
  EXPECT_EQ(Scalar(std::numeric_limits<double>::quiet_NaN()).to_int64(), 0);
  EXPECT_EQ(Scalar(-1e300).to_int64(), std::numeric_limits<int64_t>::lowest());
}

// A value the element type cannot hold is an error naming the op, the value
// and the type, as PyTorch's checked conversion has it; before, 300 filled
// a u8 tensor with 44 (or 255 as a float), 70000 an f16 one with inf.
TEST(CreationTest, AFillThatTheTypeCannotHoldIsAnError) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<Scalar, DType>> overflowing = {{300, DType::kU8},
                                                             {-256, DType::kU8},
                                                             {256.0, DType::kU8},
                                                             {-1.0, DType::kU8},
                                                             {int64_t{1} << 31, DType::kI32},
                                                             {3e9, DType::kI32},
                                                             {-3e9, DType::kI32},
                                                             {1e19, DType::kI64},
                                                             {nan, DType::kI32},
                                                             {inf, DType::kI64},
                                                             {70000.0, DType::kF16},
                                                             {-65520.0, DType::kF16},
                                                             {3.4e38, DType::kBF16},
                                                             {1e39, DType::kF32},
                                                             {int64_t{1} << 62, DType::kF16}};
  for (const auto& entry : overflowing) {
    // Not a structured binding: clang before 16 cannot capture one.
    const Scalar& value = entry.first;
    const DType dtype = entry.second;
    SCOPED_TRACE(absl::StrCat(value.to_string(), " into ", dtype_name(dtype)));
    const std::vector<std::string> named = {value.to_string(), std::string(dtype_name(dtype)), "overflow"};
    testing::expect_throws(absl::StatusCode::kInvalidArgument, {"fill_"}, [&] { full({2}, value, {dtype}); });
    testing::expect_throws(absl::StatusCode::kInvalidArgument, named, [&] { fill_(zeros({2}, {dtype}), value); });
    testing::expect_throws(absl::StatusCode::kInvalidArgument, {"masked_fill"},
                           [&] { masked_fill(zeros({2}, {dtype}), full({2}, true, {DType::kBool}), value); });
  }
  const Tensor all = full({2}, true, {DType::kBool});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"where", "300", "u8"},
                         [&] { where(all, zeros({2}, {DType::kU8}), 300); });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"where", "70000", "f16"},
                         [&] { where(all, 70000.0, zeros({2}, {DType::kF16})); });
  // A float scalar with an integer tensor makes the result f32.
  EXPECT_EQ(where(all, zeros({2}, {DType::kU8}), -1.0).dtype(), DType::kF32);

  // What the type holds, after rounding, fills: the extremes, infinities and
  // NaN of a float type, negative integers wrapping into u8 down to -255.
  EXPECT_EQ(to_vector<double>(to(full({1}, 65519.0, {DType::kF16}), DType::kF64)), std::vector<double>{65504});
  EXPECT_TRUE(std::isinf(to_vector<double>(to(full({1}, -inf, {DType::kF16}), DType::kF64))[0]));
  EXPECT_TRUE(std::isnan(to_vector<double>(to(full({1}, nan, {DType::kBF16}), DType::kF64))[0]));
  EXPECT_EQ(to_vector<uint8_t>(full({2}, -1, {DType::kU8})), (std::vector<uint8_t>{255, 255}));
  EXPECT_EQ(to_vector<uint8_t>(full({1}, -255, {DType::kU8})), std::vector<uint8_t>{1});
  EXPECT_EQ(to_vector<int32_t>(full({1}, std::numeric_limits<int32_t>::lowest(), {DType::kI32})),
            std::vector<int32_t>{std::numeric_limits<int32_t>::lowest()});
  EXPECT_EQ(to_vector<int64_t>(full({1}, -9.2233720368547758e18, {DType::kI64})),
            std::vector<int64_t>{std::numeric_limits<int64_t>::lowest()});
  EXPECT_EQ(to_vector<bool>(full({1}, nan, {DType::kBool})), std::vector<bool>{true});
  EXPECT_EQ(to_vector<double>(full({1}, 1e300, {DType::kF64})), std::vector<double>{1e300});
}

// Random123's known-answer vectors for Philox4x32-10.
TEST(PhiloxTest, KnownAnswers) {
  struct Kat {
    Philox4 counter;
    uint32_t key0, key1;
    Philox4 expected;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffff,
       0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    const Philox4 got = philox4x32_10(k.counter, k.key0, k.key1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], k.expected.v[i]);
  }
}

TEST(RandomTest, SameSeedSameNumbersAndOpsDrawDisjointStreams) {
  Generator g1(42), g2(42);
  Tensor a1 = rand({1000}, {}, &g1);
  Tensor a2 = rand({1000}, {}, &g2);
  expect_equal(a1, ref_of(a2));
  Tensor b1 = rand({1000}, {}, &g1);
  const std::vector<float> va = to_vector<float>(a1);
  const std::vector<float> vb = to_vector<float>(b1);
  int equal = 0;
  for (int i = 0; i < 1000; ++i) equal += va[i] == vb[i];
  EXPECT_LT(equal, 5);
  // Saving and restoring the state replays the stream.
  const Generator::State state = g1.state();
  Tensor c1 = randn({77}, {DType::kF64}, &g1);
  g1.set_state(state);
  Tensor c2 = randn({77}, {DType::kF64}, &g1);
  expect_equal(c1, ref_of(c2));
  g1.manual_seed(42);
  Tensor a3 = rand({1000}, {}, &g1);
  expect_equal(a3, ref_of(a1));
}

TEST(RandomTest, ValuesDependOnlyOnSeedAndPosition) {
  // A tensor of 10 elements is the prefix of one of 1000 from the same key:
  // the stream does not depend on the size or the thread decomposition.
  Generator g1(7), g2(7);
  Tensor small = rand({10}, {}, &g1);
  Tensor large = rand({1000}, {}, &g2);
  Tensor prefix = large.slice(0, 0, 10);
  expect_equal(small, ref_of(prefix));
}

struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const Tensor& t) {
  const std::vector<double> v = to_vector<double>(t);
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= v.size();
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= v.size();
  return m;
}

TEST(RandomTest, DistributionsHaveTheirMoments) {
  const int64_t n = 1 << 18;  // standard errors ~ 1/sqrt(n) = 0.002
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    Generator g(1234);
    Tensor u = uniform({n}, -1, 3, {dtype}, &g);
    Moments mu = moments(u);
    EXPECT_NEAR(mu.mean, 1.0, 0.02) << dtype_name(dtype);
    EXPECT_NEAR(mu.var, 16.0 / 12, 0.03) << dtype_name(dtype);
    Tensor lo = min(u);
    const double lo_v = item<double>(lo);
    EXPECT_GE(lo_v, -1);
    Tensor z = normal({n}, 2, 0.5, {dtype}, &g);
    Moments mz = moments(z);
    EXPECT_NEAR(mz.mean, 2.0, 0.01) << dtype_name(dtype);
    EXPECT_NEAR(mz.var, 0.25, 0.01) << dtype_name(dtype);
    Tensor bits = bernoulli({n}, 0.3, {dtype}, &g);
    EXPECT_NEAR(moments(bits).mean, 0.3, 0.01) << dtype_name(dtype);
  }
  // rand never reaches 1, even after rounding to bf16.
  Generator g(5);
  Tensor r = rand({n}, {DType::kBF16}, &g);
  Tensor hi = max(r);
  const float hi_v = item<float>(hi);
  EXPECT_LT(hi_v, 1.0f);
}

// The Kolmogorov-Smirnov statistic sup_x |F_n(x) - F(x)| of `sample`
// against the distribution with cdf(x) = P(X <= x) and cdf_below(x) =
// P(X < x) (the same function for a continuous one). F_n is constant
// between the sample's values, so the supremum is reached at one of them,
// on one side of its step.
double ks_statistic(std::vector<double> sample, const std::function<double(double)>& cdf,
                    const std::function<double(double)>& cdf_below) {
  std::sort(sample.begin(), sample.end());
  const double n = static_cast<double>(sample.size());
  double d = 0;
  for (size_t i = 0; i < sample.size();) {
    size_t j = i;
    while (j < sample.size() && sample[j] == sample[i]) ++j;
    d = std::max({d, std::abs(static_cast<double>(i) / n - cdf_below(sample[i])),
                  std::abs(static_cast<double>(j) / n - cdf(sample[i]))});
    i = j;
  }
  return d;
}

// Distance from a value a >= 0 of `dtype` to the next one away from zero
// (up) or toward it (down: half as far below a power of two in the normal
// range).
double gap_up(double a, DType dtype) { return testing::spacing(a, dtype); }
double gap_down(double a, DType dtype) {
  const double up = testing::spacing(a, dtype);
  return a > 0 && testing::spacing(a - up / 4, dtype) < up ? up / 2 : up;
}

// The largest false-failure rate allowed per check: the
// Dvoretzky-Kiefer-Wolfowitz inequality (Massart's constant) bounds
// P(D > t) <= 2 exp(-2 n t^2) for any distribution, Hoeffding's the same way
// the deviation of a Bernoulli rate; so t = sqrt(ln(2 / alpha) / (2 n)).
constexpr double kAlpha = 1e-6;
double dkw_threshold(int64_t n) { return std::sqrt(std::log(2 / kAlpha) / (2.0 * static_cast<double>(n))); }
// What the generator's float arithmetic (Box-Muller in float, the scaling
// a + b * z) may move the CDF by, against the exact distribution.
constexpr double kArithmeticSlack = 1e-5;

// uniform, normal and bernoulli against their exact CDFs with a fixed seed,
// at p = 1e-6 each (the DKW bound: D <= 0.0026 for 2^20 draws). The
// distributions as drawn, per dtype:
//   uniform(lo, hi): lo + (hi - lo) * k / 2^b, k uniform in [0, 2^b), from
//     the top b bits of a random word (tensor/philox.h: b = 53 for f64, 24
//     for f32, 11 for f16, 8 for bf16); for lo = -1, hi = 3 every such value
//     is exact in its dtype, so the CDF is a staircase of 2^b steps.
//   normal(mean, stddev): continuous for f32 and f64; for f16 and bf16 the
//     f32 draw rounded to nearest, so a value q has the probability of the
//     interval between the midpoints to its neighbors.
TEST(RandomTest, DistributionsPassKolmogorovSmirnovAgainstTheirExactCdfs) {
  const int64_t n = 1 << 20;
  const double threshold = dkw_threshold(n);
  const double lo = -1, hi = 3, mean = 2, stddev = 0.5;
  const auto phi = [&](double x) { return 0.5 * std::erfc(-(x - mean) / (stddev * std::sqrt(2.0))); };
  struct Bits {
    DType dtype;
    int uniform_bits;
  };
  for (const Bits b : {Bits{DType::kF64, 53}, Bits{DType::kF32, 24}, Bits{DType::kF16, 11}, Bits{DType::kBF16, 8}}) {
    SCOPED_TRACE(dtype_name(b.dtype));
    Generator g(20240611);
    const double steps = std::ldexp(1.0, b.uniform_bits);
    const auto uniform_cdf = [&](double x) {
      return std::clamp((std::floor((x - lo) / (hi - lo) * steps) + 1) / steps, 0.0, 1.0);
    };
    const auto uniform_cdf_below = [&](double x) {
      return std::clamp(std::ceil((x - lo) / (hi - lo) * steps) / steps, 0.0, 1.0);
    };
    const double d_uniform =
        ks_statistic(to_vector<double>(uniform({n}, lo, hi, {b.dtype}, &g)), uniform_cdf, uniform_cdf_below);
    EXPECT_LE(d_uniform, threshold) << "uniform(" << lo << ", " << hi << ")";

    const bool rounded = b.dtype == DType::kF16 || b.dtype == DType::kBF16;
    const auto normal_cdf = [&](double q) {
      if (!rounded) return phi(q);
      return phi(q + (q >= 0 ? gap_up(q, b.dtype) : gap_down(-q, b.dtype)) / 2);
    };
    const auto normal_cdf_below = [&](double q) {
      if (!rounded) return phi(q);
      return phi(q - (q > 0 ? gap_down(q, b.dtype) : gap_up(-q, b.dtype)) / 2);
    };
    const double d_normal =
        ks_statistic(to_vector<double>(normal({n}, mean, stddev, {b.dtype}, &g)), normal_cdf, normal_cdf_below);
    EXPECT_LE(d_normal, threshold + kArithmeticSlack) << "normal(" << mean << ", " << stddev << ")";

    const std::vector<double> bits = to_vector<double>(bernoulli({n}, 0.3, {b.dtype}, &g));
    EXPECT_TRUE(std::all_of(bits.begin(), bits.end(), [](double x) { return x == 0 || x == 1; }));
    const double rate = std::accumulate(bits.begin(), bits.end(), 0.0) / static_cast<double>(n);
    EXPECT_LE(std::abs(rate - 0.3), threshold) << "bernoulli(0.3)";
  }
}

// uniform is [low, high) after rounding to the dtype too: in f16, 1 + k/2048
// for k = 2047 rounds up to 2 (1 draw in 2048 before a draw that lands on
// high was given low, as PyTorch's CUDA kernel does).
TEST(RandomTest, UniformNeverReachesHighAfterRounding) {
  Generator g(0);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    const Tensor u = uniform({1 << 18}, 1, 2, {dtype}, &g);
    EXPECT_LT(item<double>(max(u)), 2) << dtype_name(dtype);
    EXPECT_GE(item<double>(min(u)), 1) << dtype_name(dtype);
  }
}

TEST(RandomTest, BernoulliWithPerElementProbabilities) {
  Generator g(99);
  std::vector<float> p(4096);
  for (size_t i = 0; i < p.size(); ++i) p[i] = i % 2 ? 1.0f : 0.0f;
  Tensor probs = from_vector<float>(p, {4096});
  Tensor draws = bernoulli(probs, &g);
  expect_equal(draws, ref_of(probs));  // p in {0, 1} is deterministic
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"bernoulli", "1.5"}, [&] { bernoulli({3}, 1.5); });
  // Per-element probabilities out of [0, 1], or NaN, are errors too (they
  // drew 1 and 0 before), as in PyTorch.
  testing::expect_throws(absl::StatusCode::kInvalidArgument,
                         {"bernoulli: probabilities must be in [0, 1], got values from -1 to 2 in f32[3]"}, [&] {
                           bernoulli(from_vector<float>({2, -1, 0.5}, {3}));
                         });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"bernoulli: probabilities must be in [0, 1]", "nan"},
                         [&] {
                           bernoulli(from_vector<float>({0.5, NAN}, {2}));
                         });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"rand", "i32"}, [&] { rand({3}, {DType::kI32}); });
}

}  // namespace
}  // namespace ts
