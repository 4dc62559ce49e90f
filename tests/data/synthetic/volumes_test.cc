// SyntheticVolumes: KiTS19-like shapes and dtypes, determinism, and labels
// predictable voxel by voxel from the intensity (far above chance) yet not
// perfectly.
#include "data/synthetic/volumes.h"

#include <algorithm>
#include <cmath>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

TEST(SyntheticVolumesTest, ShapesDtypesAndDeterminism) {
  auto set = value_or_die(SyntheticVolumes::create({.size = 4, .depth = 16, .height = 20, .width = 24, .seed = 3}));
  ASSERT_OK_AND_ASSIGN(Example e, set->get(2));
  EXPECT_EQ(e.fields[0].describe(), "f32[1, 16, 20, 24] on cpu");
  EXPECT_EQ(e.fields[1].describe(), "u8[1, 16, 20, 24] on cpu");
  ASSERT_OK_AND_ASSIGN(Example again, set->get(2));
  EXPECT_EQ(to_vector<float>(e.fields[0]), to_vector<float>(again.fields[0]));
  EXPECT_EQ(to_vector<uint8_t>(e.fields[1]), to_vector<uint8_t>(again.fields[1]));
  ASSERT_OK_AND_ASSIGN(Example other, set->get(3));
  EXPECT_NE(to_vector<uint8_t>(e.fields[1]), to_vector<uint8_t>(other.fields[1]));
  expect_error(set->get(4).status(), absl::StatusCode::kOutOfRange, {"SyntheticVolumes", "index 4"});
  expect_error(SyntheticVolumes::create({.num_classes = 1}).status(), absl::StatusCode::kInvalidArgument,
               {"num_classes", "at least 2"});
}

TEST(SyntheticVolumesTest, VoxelsAreClassifiableFromTheirIntensity) {
  auto set = value_or_die(SyntheticVolumes::create({.size = 3, .depth = 24, .height = 24, .width = 24, .seed = 8}));
  // confusion[label][predicted], predicting the class of nearest intensity.
  std::vector<std::vector<int64_t>> confusion(3, std::vector<int64_t>(3, 0));
  int64_t total = 0;
  for (int64_t i = 0; i < 3; ++i) {
    const Example e = value_or_die(set->get(i));
    const std::vector<float> x = to_vector<float>(e.fields[0]);
    const std::vector<uint8_t> y = to_vector<uint8_t>(e.fields[1]);
    for (size_t v = 0; v < x.size(); ++v) {
      int64_t best = 0;
      for (int64_t k = 1; k < 3; ++k) {
        if (std::fabs(x[v] - set->class_intensity(k)) < std::fabs(x[v] - set->class_intensity(best))) best = k;
      }
      ++confusion[y[v]][best];
      ++total;
    }
  }
  // Balanced accuracy (mean recall over classes): 1/3 for any constant
  // prediction, "all background" included.
  double balanced = 0;
  for (int64_t k = 0; k < 3; ++k) {
    const int64_t count = confusion[k][0] + confusion[k][1] + confusion[k][2];
    EXPECT_GT(count, total / 100) << "class " << k << " barely present";
    balanced += static_cast<double>(confusion[k][k]) / std::max<int64_t>(count, 1) / 3;
  }
  EXPECT_GT(balanced, 0.7);
  EXPECT_LT(balanced, 0.95);  // the noise makes neighbouring classes overlap
}

}  // namespace
}  // namespace ts::data
