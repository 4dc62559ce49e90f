// ImageFolder on folders the tests write: torchvision's class and file order
// and labels (.jpg, .jpeg and .png names), decoding by content (a PNG named
// .JPEG, as ImageNet holds one), the fused pipelines through the DataLoader,
// and the errors: a missing or empty folder, a class without images, a
// corrupt file or one too large for the memory there is named (or skipped
// and counted, deterministically, under skip_corrupt).
#include "data/sets/image_folder.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "data/loader/loader.h"
#include "data/loader/sampler.h"
#include "data/readers/jpeg.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/address_space_limit.h"
#include "tests/data/readers/jpeg_fixture.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::jpeg_fixture_bytes;
using ::ts::data::testing::read_ppm_fixture;
using ::ts::testing::expect_error;
using ::ts::testing::ok_or_die;

class ImageFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = join_path(::testing::TempDir(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  // Writes `bytes` at root/relative, making folders.
  std::string put(const std::string& relative, const std::string& bytes) {
    const std::string path = join_path(root_, relative);
    ok_or_die(make_dirs(std::filesystem::path(path).parent_path().string()));
    ok_or_die(write_file_atomically(path, bytes));
    return path;
  }
  std::string root_;
};

TEST_F(ImageFolderTest, ListsClassesAndFilesInTorchvisionOrder) {
  const std::string jpeg = jpeg_fixture_bytes("baseline_420.jpg");
  put("b_dog/2.jpg", jpeg);
  put("b_dog/10.JPEG", jpeg);
  put("b_dog/sub/0.jpeg", jpeg);  // a subfolder's files follow the folder's own
  put("b_dog/a.Jpg", jpeg);
  put("b_dog/notes.txt", "not an image");
  put("a_cat/x.JPEG", jpeg);
  put("c_cow/y.png", jpeg_fixture_bytes("png_rgb.png"));
  put("c_cow/v.PNG", jpeg_fixture_bytes("png_gray.png"));
  put("c_cow/w.webp", "ignored: a format we do not decode");
  put("c_cow/z.jpg", jpeg);
  put("stray.jpg", jpeg);  // beside the classes: not in any
  ASSERT_OK_AND_ASSIGN(auto folder, ImageFolder::open(root_));
  EXPECT_EQ(folder->classes(), (std::vector<std::string>{"a_cat", "b_dog", "c_cow"}));
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"a_cat/x.JPEG", 0},     {"b_dog/10.JPEG", 1}, {"b_dog/2.jpg", 1}, {"b_dog/a.Jpg", 1},
      {"b_dog/sub/0.jpeg", 1}, {"c_cow/v.PNG", 2},   {"c_cow/y.png", 2}, {"c_cow/z.jpg", 2}};
  ASSERT_EQ(folder->size(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < folder->size(); ++i) {
    EXPECT_EQ(folder->path(i), join_path(root_, expected[i].first));
    EXPECT_EQ(folder->label(i), expected[i].second);
  }
}

TEST_F(ImageFolderTest, GetDecodesToChannelsFirstWithTheLabel) {
  put("a/0.jpg", jpeg_fixture_bytes("gray_progressive.jpg"));
  put("b/0.jpg", jpeg_fixture_bytes("baseline_444.jpg"));
  ASSERT_OK_AND_ASSIGN(auto folder, ImageFolder::open(root_));
  ASSERT_OK_AND_ASSIGN(const Example example, folder->get(1));
  ASSERT_EQ(example.fields.size(), 2u);
  EXPECT_EQ(example.fields[0].shape(), Shape({3, 13, 17}));
  EXPECT_EQ(example.fields[0].dtype(), DType::kU8);
  EXPECT_EQ(to_vector<uint8_t>(example.fields[0]),
            to_vector<uint8_t>(contiguous(read_ppm_fixture("baseline_444.ppm").permute({2, 0, 1}))));
  EXPECT_EQ(example.fields[1].dim(), 0);
  EXPECT_EQ(example.fields[1].dtype(), DType::kI64);
  EXPECT_EQ(to_vector<int64_t>(example.fields[1]), std::vector<int64_t>{1});
  expect_error(folder->get(2).status(), absl::StatusCode::kOutOfRange, {"index 2"});
}

// ImageNet's train/n02105855/n02105855_2933.JPEG is a PNG: torchvision's
// loader opens it by content, and so do we, with Pillow's pixels, through
// the default decode and the fused pipelines alike.
TEST_F(ImageFolderTest, APngNamedJpegDecodesAsTorchvisionLoadsIt) {
  put("n02105855/n02105855_2933.JPEG", jpeg_fixture_bytes("png_rgba.png"));
  put("n02105855/n02105855_2934.JPEG", jpeg_fixture_bytes("baseline_420.jpg"));
  ASSERT_OK_AND_ASSIGN(auto folder, ImageFolder::open(root_));
  ASSERT_OK_AND_ASSIGN(const Example example, folder->get(0));
  EXPECT_EQ(to_vector<uint8_t>(example.fields[0]),
            to_vector<uint8_t>(contiguous(read_ppm_fixture("png_rgba.ppm").permute({2, 0, 1}))));
  for (const transforms::JpegPipeline& pipeline :
       {transforms::train_pipeline({.size = 8}), transforms::eval_pipeline(12, 8)}) {
    ImageFolderOptions options;
    options.pipeline = pipeline;
    ASSERT_OK_AND_ASSIGN(auto fused, ImageFolder::open(root_, options));
    ASSERT_OK_AND_ASSIGN(const Example crop, fused->get(0));
    EXPECT_EQ(crop.fields[0].shape(), Shape({3, 8, 8}));
  }
}

TEST_F(ImageFolderTest, FolderErrorsNameTheFolder) {
  expect_error(ImageFolder::open(join_path(root_, "absent")).status(), absl::StatusCode::kNotFound,
               {"absent", "no such folder"});
  put("only_a_file.jpg", jpeg_fixture_bytes("baseline_420.jpg"));
  expect_error(ImageFolder::open(root_).status(), absl::StatusCode::kNotFound, {root_, "no class folders"});
  put("full/0.jpg", jpeg_fixture_bytes("baseline_420.jpg"));
  put("empty/readme.txt", "");
  put("also_empty/x.webp", "");
  expect_error(ImageFolder::open(root_).status(), absl::StatusCode::kNotFound,
               {root_, "no image files", "also_empty, empty"});
}

TEST_F(ImageFolderTest, ACorruptFileIsAnErrorNamingIt) {
  put("a/0.jpg", jpeg_fixture_bytes("baseline_420.jpg"));
  const std::string cut = put("a/1.jpg", jpeg_fixture_bytes("progressive_420.jpg").substr(0, 300));
  ASSERT_OK_AND_ASSIGN(auto folder, ImageFolder::open(root_));
  EXPECT_OK(folder->get(0).status());
  expect_error(folder->get(1).status(), absl::StatusCode::kDataLoss, {cut});
  EXPECT_EQ(folder->corrupt_files(), 0);
}

TEST_F(ImageFolderTest, SkipCorruptServesTheNextGoodImageAndCounts) {
  put("a/0.jpg", jpeg_fixture_bytes("baseline_420.jpg"));
  put("a/1.jpg", jpeg_fixture_bytes("progressive_420.jpg").substr(0, 300));
  put("b/2.jpg", "");
  put("b/3.jpg", jpeg_fixture_bytes("cmyk.jpg"));
  ImageFolderOptions options;
  options.skip_corrupt = true;
  options.pipeline = transforms::train_pipeline({.size = 8});
  ASSERT_OK_AND_ASSIGN(auto folder, ImageFolder::open(root_, options));
  ASSERT_OK_AND_ASSIGN(const Example from_1, folder->get(1));
  EXPECT_EQ(folder->corrupt_files(), 2);                                     // 1.jpg and 2.jpg, both tried
  EXPECT_EQ(to_vector<int64_t>(from_1.fields[1]), std::vector<int64_t>{1});  // 3.jpg's label
  // The same image, drawn from sample 1's stream as if 3.jpg were asked for
  // in its place, whether or not the corrupt files are known already.
  RandomStream stream = RandomStream::for_sample(0, 0, 1);
  ASSERT_OK_AND_ASSIGN(const Tensor direct, options.pipeline(jpeg_fixture_bytes("cmyk.jpg"), "3.jpg", stream));
  EXPECT_EQ(to_vector<float>(from_1.fields[0]), to_vector<float>(direct));
  ASSERT_OK_AND_ASSIGN(const Example again, folder->get(1));
  EXPECT_EQ(to_vector<float>(again.fields[0]), to_vector<float>(direct));
  ASSERT_OK_AND_ASSIGN(const Example from_2, folder->get(2));
  EXPECT_EQ(to_vector<float>(from_2.fields[0]).size(), 3u * 8 * 8);
  EXPECT_EQ(folder->corrupt_files(), 2);  // each file counted once
  // Unreadable is not corrupt: still an error.
  std::filesystem::remove(join_path(root_, "b/3.jpg"));
  expect_error(folder->get(3).status(), absl::StatusCode::kNotFound, {"3.jpg"});
  put("b/3.jpg", "");
  ASSERT_OK_AND_ASSIGN(folder, ImageFolder::open(root_, options));
  put("a/0.jpg", "broken now");
  expect_error(folder->get(0).status(), absl::StatusCode::kDataLoss, {root_, "none of the 4 image files decodes"});
  EXPECT_EQ(folder->corrupt_files(), 4);
}

// A header within the pixel limit whose image the memory there is cannot
// hold (made so by a lowered address-space limit): an error naming the file,
// not an exception naming only the sample; skip_corrupt passes over it.
TEST_F(ImageFolderTest, AFileTooLargeForMemoryIsNamedOrSkipped) {
  if (!::ts::data::testing::AddressSpaceLimit::usable()) {
    GTEST_SKIP() << "the address-space limit does not work under sanitizers";
  }
  std::string huge = jpeg_fixture_bytes("cmyk.jpg");
  const size_t sof = huge.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  huge.replace(sof + 5, 4, std::string("\x40\x00\x40\x00", 4));  // 16384 x 16384
  const std::string path = put("a/0.jpg", huge);
  put("a/1.jpg", jpeg_fixture_bytes("baseline_420.jpg"));
  ImageFolderOptions options;
  options.pipeline = transforms::eval_pipeline(12, 8);
  ASSERT_OK_AND_ASSIGN(auto strict, ImageFolder::open(root_, options));
  options.skip_corrupt = true;
  ASSERT_OK_AND_ASSIGN(auto skipping, ImageFolder::open(root_, options));
  ::ts::data::testing::AddressSpaceLimit limit(int64_t{256} << 20);
  expect_error(strict->get(0).status(), absl::StatusCode::kResourceExhausted, {path, "16384x16384", "out of memory"});
  ASSERT_OK_AND_ASSIGN(const Example example, skipping->get(0));
  EXPECT_EQ(example.fields[0].shape(), Shape({3, 8, 8}));
  EXPECT_EQ(skipping->corrupt_files(), 1);
}

TEST_F(ImageFolderTest, FeedsTheLoaderWithTheFusedPipelines) {
  for (int i = 0; i < 6; ++i) {
    put(absl::StrCat(i % 2 ? "b" : "a", "/", i, ".jpg"),
        jpeg_fixture_bytes(i % 3 ? "baseline_420.jpg" : "progressive_420.jpg"));
  }
  ImageFolderOptions options;
  options.pipeline = transforms::train_pipeline({.size = 16});
  std::shared_ptr<const Dataset> folder = ::ts::testing::value_or_die(ImageFolder::open(root_, options));
  std::vector<std::vector<float>> runs[2];
  for (int workers : {0, 2}) {
    LoaderOptions loader_options;
    loader_options.batch_size = 4;
    loader_options.num_workers = workers;
    loader_options.seed = 9;
    loader_options.pin_memory = false;
    ASSERT_OK_AND_ASSIGN(auto loader,
                         DataLoader::create(folder, std::make_unique<SequentialSampler>(6), std::move(loader_options)));
    ASSERT_OK(loader->start_epoch(0));
    while (true) {
      ASSERT_OK_AND_ASSIGN(std::optional<Batch> batch, loader->next());
      if (!batch) break;
      EXPECT_EQ(batch->fields[0].shape(), Shape({batch->fields[1].numel(), 3, 16, 16}));
      EXPECT_EQ(batch->fields[0].dtype(), DType::kF32);
      runs[workers ? 1 : 0].push_back(to_vector<float>(batch->fields[0]));
    }
  }
  EXPECT_EQ(runs[0], runs[1]);  // the same augmentation whatever the worker count
}

}  // namespace
}  // namespace ts::data
