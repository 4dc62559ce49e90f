// SyntheticImages: shapes and dtypes of the real sets, determinism from the
// seed, streams apart from the loader's, and learnability (a nearest-class-mean classifier far above chance).
#include "data/synthetic/images.h"

#include <cmath>

#include "data/loader/random_stream.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

std::vector<float> pixels(const Dataset& set, int64_t i) {
  return to_vector<float>(value_or_die(set.get(i)).fields[0]);
}

TEST(SyntheticImagesTest, HasFashionMnistShapesByDefault) {
  auto set = value_or_die(SyntheticImages::create({}));
  EXPECT_EQ(set->size(), 60000);
  ASSERT_OK_AND_ASSIGN(Example e, set->get(123));
  ASSERT_EQ(e.fields.size(), 2u);
  EXPECT_EQ(e.fields[0].describe(), "u8[1, 28, 28] on cpu");
  EXPECT_EQ(e.fields[1].describe(), "i64[] on cpu");
  EXPECT_EQ(item<int64_t>(e.fields[1]), set->label_of(123));
  auto cifar = value_or_die(SyntheticImages::create({.channels = 3, .height = 32, .width = 32, .dtype = DType::kF32}));
  EXPECT_EQ(value_or_die(cifar->get(0)).fields[0].describe(), "f32[3, 32, 32] on cpu");
}

TEST(SyntheticImagesTest, IsAFunctionOfSeedAndIndex) {
  auto a = value_or_die(SyntheticImages::create({.seed = 5}));
  auto b = value_or_die(SyntheticImages::create({.seed = 5}));
  auto c = value_or_die(SyntheticImages::create({.seed = 6}));
  EXPECT_EQ(pixels(*a, 17), pixels(*b, 17));
  EXPECT_EQ(pixels(*a, 17), pixels(*a, 17));
  EXPECT_NE(pixels(*a, 17), pixels(*a, 18));
  EXPECT_NE(pixels(*a, 17), pixels(*c, 17));
}

// The tasks give the loader and the synthetic set one seed: a sample's
// augmentation stream must not be the stream its label came from, or in
// that epoch the crops would follow the labels.
TEST(SyntheticImagesTest, TheLoadersStreamsDoNotReplayTheLabels) {
  auto set = value_or_die(SyntheticImages::create({.size = 1000, .seed = 5}));
  for (uint64_t epoch = 0; epoch < 5; ++epoch) {
    int same = 0;
    for (int64_t i = 0; i < set->size(); ++i) {
      same += RandomStream::for_sample(5, epoch, i).uniform_int(10) == set->label_of(i);
    }
    EXPECT_LT(same, 150) << "epoch " << epoch << ": chance is 100 of 1000";
  }
}

TEST(SyntheticImagesTest, FirstSampleGivesAHeldOutSplitOfTheSameClasses) {
  auto train = value_or_die(SyntheticImages::create({.size = 100, .seed = 5}));
  auto test = value_or_die(SyntheticImages::create({.size = 10, .seed = 5, .first_sample = 100}));
  auto longer = value_or_die(SyntheticImages::create({.size = 110, .seed = 5}));
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(pixels(*test, i), pixels(*longer, 100 + i));
    EXPECT_EQ(test->label_of(i), longer->label_of(100 + i));
    EXPECT_NE(pixels(*test, i), pixels(*train, i));
  }
}

TEST(SyntheticImagesTest, NearestClassMeanBeatsChanceByFar) {
  const int64_t classes = 10;
  auto set = value_or_die(SyntheticImages::create({.size = 3000, .seed = 1}));
  const int64_t dims = 28 * 28;
  std::vector<std::vector<double>> means(classes, std::vector<double>(dims, 0));
  std::vector<int64_t> counts(classes, 0);
  for (int64_t i = 0; i < 2000; ++i) {
    const int64_t label = set->label_of(i);
    const std::vector<float> x = pixels(*set, i);
    for (int64_t p = 0; p < dims; ++p) means[label][p] += x[p];
    ++counts[label];
  }
  for (int64_t k = 0; k < classes; ++k) {
    ASSERT_GT(counts[k], 100) << "class " << k << " is rare: labels are not balanced";
    for (double& m : means[k]) m /= counts[k];
  }
  int64_t correct = 0;
  for (int64_t i = 2000; i < 3000; ++i) {
    const std::vector<float> x = pixels(*set, i);
    int64_t best = 0;
    double best_distance = INFINITY;
    for (int64_t k = 0; k < classes; ++k) {
      double distance = 0;
      for (int64_t p = 0; p < dims; ++p) distance += (x[p] - means[k][p]) * (x[p] - means[k][p]);
      if (distance < best_distance) best_distance = distance, best = k;
    }
    correct += best == set->label_of(i);
  }
  EXPECT_GT(correct, 900) << "accuracy " << correct / 1000.0 << " vs chance 0.1";
  // Not trivially constant either: pixels of one class vary (the noise).
  EXPECT_NE(pixels(*set, 0), pixels(*set, [&] {
              for (int64_t j = 1;; ++j)
                if (set->label_of(j) == set->label_of(0)) return j;
            }()));
}

TEST(SyntheticImagesTest, RejectsBadOptionsAndIndices) {
  expect_error(SyntheticImages::create({.channels = 0}).status(), absl::StatusCode::kInvalidArgument,
               {"SyntheticImages", "channels", "at least 1"});
  expect_error(SyntheticImages::create({.dtype = DType::kI32}).status(), absl::StatusCode::kInvalidArgument,
               {"u8 or f32"});
  auto set = value_or_die(SyntheticImages::create({.size = 10}));
  expect_error(set->get(10).status(), absl::StatusCode::kOutOfRange, {"index 10", "[0, 10)"});
}

}  // namespace
}  // namespace ts::data
