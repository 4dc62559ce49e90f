// The Fashion-MNIST JPEG folder on Debian's files (skipped, visibly, when
// dataset-fashion-mnist is absent): two images per class, readable by
// ImageFolder with the labels of the IDX file and the pictures of it, the
// same bytes on every build, rebuilt in place, and cached.
#include "tools/corpus/jpeg_folder.h"

#include <filesystem>
#include <string>
#include <vector>

#include "base/files.h"
#include "data/sets/image_folder.h"
#include "data/transforms/resize.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/fashion_mnist_testing.h"
#include "tests/tensor/testing.h"

namespace ts::corpus {
namespace {

namespace fs = std::filesystem;
using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

class JpegFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TS_SKIP_WITHOUT_FASHION_MNIST();
    root_ = join_path(::testing::TempDir(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    options_.limit_per_class = 2;
    options_.size = 32;
  }
  // Every file under dir by relative path, with its bytes.
  static std::vector<std::pair<std::string, std::string>> contents(const std::string& dir) {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file()) {
        files.emplace_back(fs::relative(entry.path(), dir).string(), value_or_die(read_file(entry.path().string())));
      }
    }
    std::sort(files.begin(), files.end());
    return files;
  }
  std::string root_;
  JpegFolderOptions options_;
};

TEST_F(JpegFolderTest, BuildsAFolderImageFolderReads) {
  options_.out_dir = join_path(root_, "out");
  ASSERT_OK_AND_ASSIGN(const JpegFolderStats stats, build_jpeg_folder(options_));
  EXPECT_EQ(stats.train_images, 20);
  EXPECT_EQ(stats.val_images, 20);
  const auto mnist = value_or_die(data::open_mnist(data::kFashionMnistDir, /*train=*/true));
  for (const char* split : {"train", "val"}) {
    ASSERT_OK_AND_ASSIGN(auto folder, data::ImageFolder::open(join_path(options_.out_dir, split)));
    EXPECT_EQ(folder->classes(),
              std::vector<std::string>(std::begin(kFashionMnistClassFolders), std::end(kFashionMnistClassFolders)));
    ASSERT_EQ(folder->size(), 20);
    for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(folder->label(i), i / 2);
  }
  // The first training file of class 0 is the first T-shirt of the IDX file,
  // upscaled: within JPEG's loss of it.
  ASSERT_OK_AND_ASSIGN(auto train, data::ImageFolder::open(join_path(options_.out_dir, "train")));
  const std::string first = fs::path(train->path(0)).stem().string();
  const int64_t index = std::stoll(first);
  EXPECT_EQ(to_vector<int64_t>(mnist->labels().select(0, index)), std::vector<int64_t>{0});
  ASSERT_OK_AND_ASSIGN(const data::Example example, train->get(0));
  ASSERT_EQ(example.fields[0].shape(), Shape({3, 32, 32}));
  ASSERT_OK_AND_ASSIGN(const Tensor upscaled, data::transforms::resize_image(mnist->images().select(0, index), 32, 32));
  const std::vector<uint8_t> decoded = to_vector<uint8_t>(example.fields[0].narrow(0, 1, 1));
  const std::vector<uint8_t> original = to_vector<uint8_t>(upscaled);
  double error = 0;
  for (size_t i = 0; i < decoded.size(); ++i) error += std::abs(decoded[i] - original[i]);
  EXPECT_LT(error / decoded.size(), 3.0);
}

TEST_F(JpegFolderTest, IsDeterministicAndRebuildsInPlace) {
  options_.out_dir = join_path(root_, "a");
  ASSERT_OK(build_jpeg_folder(options_).status());
  const auto first = contents(options_.out_dir);
  ASSERT_EQ(first.size(), 40u);
  ASSERT_OK(build_jpeg_folder(options_).status());  // over the existing folder
  EXPECT_EQ(contents(options_.out_dir), first);
  options_.out_dir = join_path(root_, "b");
  ASSERT_OK(build_jpeg_folder(options_).status());
  EXPECT_EQ(contents(options_.out_dir), first);
  // No partial folders left beside them.
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(root_)) entries += entry.is_directory();
  EXPECT_EQ(entries, 2);
}

TEST_F(JpegFolderTest, CachedFolderIsBuiltOnce) {
  ASSERT_OK_AND_ASSIGN(const std::string dir, cached_jpeg_folder(root_, options_));
  EXPECT_EQ(dir, join_path(root_, "fashion-mnist-jpeg-32px-q90-2-per-class"));
  const auto built = fs::last_write_time(join_path(dir, "train/0_t-shirt_top"));
  ASSERT_OK_AND_ASSIGN(const std::string again, cached_jpeg_folder(root_, options_));
  EXPECT_EQ(again, dir);
  EXPECT_EQ(fs::last_write_time(join_path(dir, "train/0_t-shirt_top")), built);
  EXPECT_EQ(contents(dir).size(), 40u);
}

TEST_F(JpegFolderTest, RejectsBadOptionsAndMissingData) {
  options_.out_dir = join_path(root_, "x");
  options_.quality = 0;
  expect_error(build_jpeg_folder(options_).status(), absl::StatusCode::kInvalidArgument, {"quality 0"});
  options_.quality = 90;
  options_.fashion_mnist_dir = join_path(root_, "nowhere");
  expect_error(build_jpeg_folder(options_).status(), absl::StatusCode::kNotFound, {"nowhere"});
  EXPECT_FALSE(fs::exists(options_.out_dir));
}

}  // namespace
}  // namespace ts::corpus
