// ts::percentile against values NumPy gives (np.percentile, default
// "linear" method), and its edge cases.
#include "base/percentile.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ts {
namespace {

TEST(PercentileTest, MatchesNumPy) {
  // np.percentile([0.3, 0.1, 0.4, 0.2], [0, 50, 75, 90, 95, 100])
  const std::vector<double> v = {0.3, 0.1, 0.4, 0.2};
  EXPECT_DOUBLE_EQ(percentile(v, 0), 0.1);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 0.25);
  EXPECT_DOUBLE_EQ(percentile(v, 75), 0.325);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 0.37);
  EXPECT_DOUBLE_EQ(percentile(v, 95), 0.385);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 0.4);
}

TEST(PercentileTest, EdgeCases) {
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
  EXPECT_DOUBLE_EQ(percentile({7.0}, 95), 7.0);
  EXPECT_DOUBLE_EQ(percentile({1.0, 2.0}, 150), 2.0);  // clamped
  EXPECT_DOUBLE_EQ(percentile({1.0, 2.0}, -5), 1.0);
}

}  // namespace
}  // namespace ts
