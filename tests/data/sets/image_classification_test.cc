// The ResNet tasks' image sets as a task opens them: CIFAR-10 from a folder
// of binary batches the test writes (the five training batches in order, the
// test batch, MLBench's normalization, the errors that name --data_path or
// the missing or truncated file), Fashion-MNIST from Debian's files (padded
// to 32x32 before it is normalized), and the synthetic stand-ins' shapes.
#include "data/sets/image_classification.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "data/readers/cifar.h"
#include "data/readers/idx.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

// Record r of batch b: label (b + r) % 10, every pixel byte 10 * b + r, so
// each image tells which batch and record it came from.
std::string cifar_batch(int batch, int records) {
  std::string bytes;
  for (int r = 0; r < records; ++r) {
    bytes.push_back(static_cast<char>((batch + r) % 10));
    bytes.append(kCifarImageBytes, static_cast<char>(10 * batch + r));
  }
  return bytes;
}

class ImageClassificationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = join_path(::testing::TempDir(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    ts::testing::ok_or_die(make_dirs(dir_));
  }
  // data_batch_1..5.bin with 2 records each, test_batch.bin with 3 (batch 6).
  void write_cifar10() {
    for (int b = 1; b <= 5; ++b) put(absl::StrCat("data_batch_", b, ".bin"), cifar_batch(b, 2));
    put("test_batch.bin", cifar_batch(6, 3));
  }
  void put(const std::string& name, const std::string& bytes) {
    ts::testing::ok_or_die(write_file_atomically(join_path(dir_, name), bytes));
  }
  ImageClassificationOptions cifar10() const {
    ImageClassificationOptions options;
    options.set = ImageSet::kCifar10;
    options.path = dir_;
    return options;
  }
  std::string dir_;
};

Example get(const Dataset& set, int64_t index) { return value_or_die(set.get(index)); }

// Element (c, h, w) of a [C, H, W] image, as a double.
template <typename T>
double pixel(const Tensor& image, int64_t c, int64_t h, int64_t w) {
  return to_vector<T>(image)[(c * image.size(1) + h) * image.size(2) + w];
}

TEST_F(ImageClassificationTest, Cifar10ReadsTheFiveTrainingBatchesInOrderAndTheTestBatch) {
  write_cifar10();
  const ImageClassificationData data = value_or_die(open_image_classification(cifar10()));
  EXPECT_EQ(data.channels, 3);
  EXPECT_EQ(data.num_classes, 10);
  EXPECT_EQ(data.description, absl::StrCat("cifar-10 (", dir_, ")"));
  ASSERT_EQ(data.train->size(), 10);
  ASSERT_EQ(data.test->size(), 3);
  for (int64_t i = 0; i < 10; ++i) {
    const int batch = 1 + static_cast<int>(i / 2), record = static_cast<int>(i % 2);
    const Example e = get(*data.train, i);
    EXPECT_EQ(e.fields[0].shape(), Shape({3, 32, 32}));
    EXPECT_EQ(pixel<uint8_t>(e.fields[0], 2, 31, 31), 10 * batch + record) << "training example " << i;
    EXPECT_EQ(item<int64_t>(e.fields[1]), (batch + record) % 10) << "training example " << i;
  }
  EXPECT_EQ(pixel<uint8_t>(get(*data.test, 2).fields[0], 0, 0, 0), 62);
  EXPECT_EQ(item<int64_t>(get(*data.test, 2).fields[1]), 8);
}

// MLBench's CIFAR10V1 statistics, per channel, on both splits; training
// crops (padding 4) and flips but keeps the 32x32 shape.
TEST_F(ImageClassificationTest, Cifar10NormalizesWithMlbenchsStatistics) {
  write_cifar10();
  const ImageClassificationData data = value_or_die(open_image_classification(cifar10()));
  const std::vector<double> mean = {0.4914, 0.4822, 0.4465}, stddev = {0.2023, 0.1994, 0.2010};
  RandomStream rng = RandomStream::for_sample(7, 0, 0);
  const Example test = value_or_die(data.test_transform(get(*data.test, 1), rng));
  ASSERT_EQ(test.fields[0].dtype(), DType::kF32);
  ASSERT_EQ(test.fields[0].shape(), Shape({3, 32, 32}));
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_NEAR(pixel<float>(test.fields[0], c, 17, 5), (61 / 255.0 - mean[c]) / stddev[c], 1e-6) << "channel " << c;
  }
  // The centre lies inside the image whatever the crop's offset (at most 4)
  // and flip: every pixel of training example 0 is 10.
  const Example train = value_or_die(data.train_transform(get(*data.train, 0), rng));
  ASSERT_EQ(train.fields[0].shape(), Shape({3, 32, 32}));
  EXPECT_NEAR(pixel<float>(train.fields[0], 0, 16, 16), (10 / 255.0 - mean[0]) / stddev[0], 1e-6);
}

TEST_F(ImageClassificationTest, Cifar10WithoutAFolderNamesTheFlag) {
  ImageClassificationOptions options = cifar10();
  options.path.clear();
  expect_error(open_image_classification(options).status(), absl::StatusCode::kInvalidArgument,
               {"CIFAR10", "--data_path", "data_batch_{1..5}.bin", "test_batch.bin"});
}

TEST_F(ImageClassificationTest, Cifar10NamesAMissingOrTruncatedBatch) {
  write_cifar10();
  std::filesystem::remove(join_path(dir_, "data_batch_4.bin"));
  expect_error(open_image_classification(cifar10()).status(), absl::StatusCode::kNotFound, {"data_batch_4.bin"});

  write_cifar10();
  put("test_batch.bin", cifar_batch(6, 3).substr(0, 2 * 3073 + 100));
  expect_error(open_image_classification(cifar10()).status(), absl::StatusCode::kInvalidArgument, {"test_batch.bin"});
}

// Debian's Fashion-MNIST (the default folder): 28x28 images padded with
// zeros to 32x32, then normalized with the set's own statistics.
TEST_F(ImageClassificationTest, FashionMnistIsPaddedTo32BeforeItIsNormalized) {
  if (!std::filesystem::exists(kFashionMnistDir)) GTEST_SKIP() << kFashionMnistDir << " is not installed";
  const ImageClassificationData data = value_or_die(open_image_classification({}));
  EXPECT_EQ(data.channels, 1);
  EXPECT_EQ(data.num_classes, 10);
  EXPECT_EQ(data.train->size(), 60000);
  EXPECT_EQ(data.test->size(), 10000);
  const Example raw = get(*data.test, 0);
  ASSERT_EQ(raw.fields[0].shape(), Shape({1, 28, 28}));
  RandomStream rng = RandomStream::for_sample(7, 0, 0);
  const Example test = value_or_die(data.test_transform(raw, rng));
  ASSERT_EQ(test.fields[0].shape(), Shape({1, 32, 32}));
  EXPECT_NEAR(pixel<float>(test.fields[0], 0, 0, 0), -0.2860 / 0.3530, 1e-6);  // padding
  EXPECT_NEAR(pixel<float>(test.fields[0], 0, 16, 16),
              (pixel<uint8_t>(raw.fields[0], 0, 14, 14) / 255.0 - 0.2860) / 0.3530, 1e-6);
}

TEST_F(ImageClassificationTest, SyntheticSetsHaveTheRealSetsShapes) {
  for (const auto& [set, channels] : {std::pair{ImageSet::kFashionMnist, 1}, std::pair{ImageSet::kCifar10, 3}}) {
    ImageClassificationOptions options;
    options.set = set;
    options.synthetic = true;
    options.seed = 3;
    const ImageClassificationData data = value_or_die(open_image_classification(options));
    EXPECT_EQ(data.channels, channels);
    EXPECT_EQ(data.num_classes, 10);
    EXPECT_EQ(data.train->size(), set == ImageSet::kCifar10 ? 50000 : 60000);
    EXPECT_EQ(data.test->size(), 10000);
    RandomStream rng = RandomStream::for_sample(7, 0, 0);
    const Example test = value_or_die(data.test_transform(get(*data.test, 0), rng));
    EXPECT_EQ(test.fields[0].shape(), Shape({channels, 32, 32}));
  }
}

}  // namespace
}  // namespace ts::data
