// exp_lanes (tensor/cpu/vector_exp.h) against the x87 long double expl on
// fresh random arguments over the whole range and around its edges: within
// 1.2 ulp of the exact value (its Horner steps round separately, no FMA),
// subnormal results included; inf, 0 and NaN where exp gives them.
#include "tensor/cpu/vector_exp.h"

#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::cpu {
namespace {

// |got - exact| in units of the last place of the correctly rounded result
// (the smallest subnormal for results that round to 0).
double ulp_error(double x) {
  const long double exact = expl(static_cast<long double>(x));
  const double rounded = static_cast<double>(exact);
  const double ulp = rounded == 0 ? std::numeric_limits<double>::denorm_min()
                                  : std::nextafter(rounded, std::numeric_limits<double>::infinity()) - rounded;
  return static_cast<double>(fabsl(static_cast<long double>(exp_lanes(x)) - exact) / ulp);
}

class VectorExpTest : public ::ts::testing::SeededTest {};

TEST_F(VectorExpTest, WithinOnePointTwoUlpOverTheWholeRange) {
  struct Range {
    double lo, hi;
  };
  // Everything finite; near zero; the subnormal results; near overflow.
  for (const Range range :
       {Range{-745, 709.7}, Range{-1, 1}, Range{-1e-9, 1e-9}, Range{-745.1, -708}, Range{709, 709.78}}) {
    std::uniform_real_distribution<double> uniform(range.lo, range.hi);
    double worst = 0, worst_x = 0;
    for (int i = 0; i < 200000; ++i) {
      const double x = uniform(rng());
      const double error = ulp_error(x);
      if (error > worst) worst = error, worst_x = x;
    }
    EXPECT_LE(worst, 1.2) << "in [" << range.lo << ", " << range.hi << "] at x = " << worst_x;
  }
}

TEST_F(VectorExpTest, EdgesAreThoseOfExp) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const double x : {0.0, -0.0, 1e-300, -1e-300, 709.78, 709.7827128933840, -708.5, -744.4, -745.1}) {
    EXPECT_LE(ulp_error(x), 1.2) << x;
  }
  EXPECT_EQ(exp_lanes(0.0), 1.0);
  for (const double x : {709.79, 710.0, 1e300, inf}) EXPECT_EQ(exp_lanes(x), inf) << x;
  for (const double x : {-745.2, -746.0, -1e300, -inf}) EXPECT_EQ(exp_lanes(x), 0.0) << x;
  EXPECT_TRUE(std::isnan(exp_lanes(std::numeric_limits<double>::quiet_NaN())));
}

}  // namespace
}  // namespace ts::cpu
