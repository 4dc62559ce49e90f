// The ResNet-50 task's data: a JPEG folder in ImageNet's layout read with
// torchvision's transforms (training crops of image_size, evaluation's
// resize and center crop), Fashion-MNIST built as such a folder in the
// cache on first use, synthetic images of the dataset's shapes, and the
// errors a user meets (no data_path, mismatched class folders, bad sizes).
#include "tasks/resnet50/imagenet_data.h"

#include <filesystem>
#include <string>

#include "base/files.h"
#include "base/status_macros.h"
#include "data/loader/random_stream.h"
#include "gtest/gtest.h"
#include "tasks/resnet50/resnet50.pb.h"
#include "tests/data/readers/fashion_mnist_testing.h"
#include "tests/tensor/testing.h"
#include "tools/corpus/jpeg_folder.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

TaskConfig config(ResNet50Config::Dataset dataset, const std::string& data_path = "") {
  TaskConfig c;
  c.set_data_path(data_path);
  ResNet50Config& r = *c.MutableExtension(resnet50);
  r.set_dataset(dataset);
  r.set_image_size(24);
  r.set_eval_resize(28);
  r.set_jpeg_size(32);
  r.set_jpeg_limit_per_class(2);
  r.set_cache_dir(join_path(::testing::TempDir(), "cache"));
  return c;
}

void expect_image(const data::Dataset& set, int64_t index, int64_t side) {
  data::RandomStream rng = data::RandomStream::for_sample(1, 0, index);
  absl::StatusOr<data::Example> e = set.get_augmented(index, rng);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->fields[0].shape(), (Shape{3, side, side}));
  EXPECT_EQ(e->fields[0].dtype(), DType::kF32);
  EXPECT_EQ(e->fields[1].dtype(), DType::kI64);
}

TEST(ImageNetDataTest, FashionMnistJpegFolderIsBuiltInTheCacheAndRead) {
  TS_SKIP_WITHOUT_FASHION_MNIST();
  ASSERT_OK_AND_ASSIGN(const ImageNetData data, open_imagenet_data(config(ResNet50Config::FASHION_MNIST_JPEG)));
  EXPECT_EQ(data.num_classes, 10);
  EXPECT_EQ(data.data.train->size(), 20);
  EXPECT_EQ(data.data.eval->size(), 20);
  EXPECT_EQ(data.train_folder->classes()[0], "0_t-shirt_top");
  expect_image(*data.data.train, 3, 24);
  expect_image(*data.data.eval, 3, 24);
  EXPECT_NE(data.data.description.find("fashion-mnist-jpeg-32px"), std::string::npos) << data.data.description;
}

// A folder of one 32x32 JPEG per class and split, in ImageNet's layout.
absl::StatusOr<std::string> tiny_folder(const std::string& name) {
  corpus::JpegFolderOptions options;
  options.size = 32;
  options.limit_per_class = 1;
  options.out_dir = join_path(::testing::TempDir(), name);
  RETURN_IF_ERROR(corpus::build_jpeg_folder(options).status());
  return options.out_dir;
}

TEST(ImageNetDataTest, ImageFolderReadsTrainAndValOfDataPath) {
  ASSERT_OK_AND_ASSIGN(const std::string dir, tiny_folder("imagenet_like"));
  ASSERT_OK_AND_ASSIGN(const ImageNetData data, open_imagenet_data(config(ResNet50Config::IMAGE_FOLDER, dir)));
  EXPECT_EQ(data.num_classes, 10);
  EXPECT_EQ(data.data.train->size(), 10);
  expect_image(*data.data.train, 9, 24);

  // A class folder missing from val/ is named.
  std::filesystem::remove_all(join_path(dir, "val/9_ankle_boot"));
  expect_error(open_imagenet_data(config(ResNet50Config::IMAGE_FOLDER, dir)).status(),
               absl::StatusCode::kInvalidArgument, {"train has 10 classes", "val has 9"});
}

TEST(ImageNetDataTest, SkippedCorruptFilesAreCountedForTheReport) {
  ASSERT_OK_AND_ASSIGN(const std::string dir, tiny_folder("with_a_corrupt_file"));
  TaskConfig c = config(ResNet50Config::IMAGE_FOLDER, dir);
  ASSERT_OK_AND_ASSIGN(const ImageNetData clean, open_imagenet_data(c));
  EXPECT_FALSE(clean.data.statistics) << "nothing to count unless skip_corrupt";
  // The first training image, truncated.
  const std::string victim = clean.train_folder->path(0);
  ASSERT_OK_AND_ASSIGN(const std::string bytes, read_file(victim));
  ASSERT_OK(write_file_atomically(victim, bytes.substr(0, bytes.size() / 2)));
  c.MutableExtension(resnet50)->set_skip_corrupt(true);
  ASSERT_OK_AND_ASSIGN(const ImageNetData data, open_imagenet_data(c));
  ASSERT_TRUE(data.data.statistics);
  EXPECT_EQ(data.data.statistics().find("corrupt_files_skipped")->as_int(), 0);
  expect_image(*data.data.train, 0, 24);  // the next image that decodes
  EXPECT_EQ(data.data.statistics().find("corrupt_files_skipped")->as_int(), 1);

  // A corrupt validation image stays an error naming it: the image served in
  // its place would count twice in the accuracy, the corrupt one never.
  const std::string val_victim = data.val_folder->path(3);
  ASSERT_OK_AND_ASSIGN(const std::string val_bytes, read_file(val_victim));
  ASSERT_OK(write_file_atomically(val_victim, val_bytes.substr(0, val_bytes.size() / 2)));
  ASSERT_OK_AND_ASSIGN(const ImageNetData again, open_imagenet_data(c));
  expect_error(again.data.eval->get(3).status(), absl::StatusCode::kDataLoss, {val_victim});
  EXPECT_EQ(again.data.statistics().find("corrupt_files_skipped")->as_int(), 0);
}

TEST(ImageNetDataTest, SyntheticImagesHaveTheDatasetsShapes) {
  TaskConfig c = config(ResNet50Config::IMAGE_FOLDER);
  c.set_synthetic(true);
  ASSERT_OK_AND_ASSIGN(const ImageNetData data, open_imagenet_data(c));
  EXPECT_EQ(data.num_classes, 1000);
  EXPECT_EQ(data.data.train->size(), 1281167);
  EXPECT_EQ(data.data.eval->size(), 50000);
  expect_image(*data.data.train, 5, 24);
}

TEST(ImageNetDataTest, ErrorsNameWhatIsWrong) {
  expect_error(open_imagenet_data(config(ResNet50Config::IMAGE_FOLDER)).status(), absl::StatusCode::kInvalidArgument,
               {"IMAGE_FOLDER", "--data_path"});
  expect_error(open_imagenet_data(config(ResNet50Config::FASHION_MNIST_JPEG, "/data/imagenet")).status(),
               absl::StatusCode::kInvalidArgument, {"data_path /data/imagenet", "only with dataset IMAGE_FOLDER"});
  TaskConfig c = config(ResNet50Config::FASHION_MNIST_JPEG);
  c.MutableExtension(resnet50)->set_eval_resize(16);
  expect_error(open_imagenet_data(c).status(), absl::StatusCode::kInvalidArgument, {"eval_resize 16", "image_size"});
  expect_error(open_imagenet_data(config(ResNet50Config::IMAGE_FOLDER, "/nonexistent")).status(),
               absl::StatusCode::kNotFound, {"/nonexistent/train"});
}

}  // namespace
}  // namespace ts::tasks
