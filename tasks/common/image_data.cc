#include "tasks/common/image_data.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "data/readers/cifar.h"
#include "data/readers/idx.h"
#include "data/synthetic/images.h"
#include "data/transforms/image.h"
#include "tensor/status_macros.h"

namespace ts::tasks {
namespace {

namespace transforms = data::transforms;

constexpr int64_t kSide = 32;

struct Normalization {
  std::vector<float> mean, std;
};

// Per-channel statistics of the training sets, as commonly used.
const Normalization kFashionMnist = {{0.2860f}, {0.3530f}};
const Normalization kCifar10 = {{0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f}};

// Pads smaller images to 32x32 first (Fashion-MNIST's 28x28).
void set_transforms(ClassificationData& splits, const Normalization& norm, int64_t side) {
  std::vector<data::Transform> train, test;
  if (side < kSide) {
    train.push_back(transforms::pad_to(kSide, kSide));
    test.push_back(transforms::pad_to(kSide, kSide));
  }
  train.push_back(transforms::random_crop(kSide, kSide, 4));
  train.push_back(transforms::random_horizontal_flip());
  train.push_back(transforms::normalize(norm.mean, norm.std));
  test.push_back(transforms::normalize(norm.mean, norm.std));
  splits.train_transform = data::compose(std::move(train));
  splits.test_transform = data::compose(std::move(test));
}

absl::StatusOr<ClassificationData> synthetic_splits(const TaskConfig& config, int64_t channels,
                                             int64_t side, int64_t train_size, int64_t test_size) {
  ClassificationData splits;
  data::SyntheticImageOptions options;
  options.channels = channels;
  options.height = options.width = side;
  options.size = train_size;
  options.seed = config.seed();
  ASSIGN_OR_RETURN(splits.train, data::SyntheticImages::create(options));
  options.size = test_size;
  options.first_sample = train_size;  // same class templates, unseen samples
  ASSIGN_OR_RETURN(std::unique_ptr<data::SyntheticImages> test,
                   data::SyntheticImages::create(options));
  splits.test = std::move(test);
  splits.channels = channels;
  splits.num_classes = 10;
  splits.description = absl::StrCat("synthetic ", channels, "x", side, "x", side, " (seed ",
                                    config.seed(), ")");
  return splits;
}

absl::StatusOr<ClassificationData> fashion_mnist(const TaskConfig& config) {
  if (config.synthetic()) {
    ASSIGN_OR_RETURN(ClassificationData splits, synthetic_splits(config, 1, 28, 60000, 10000));
    set_transforms(splits, kFashionMnist, 28);
    return splits;
  }
  const std::string dir = config.data_path().empty() ? data::kFashionMnistDir : config.data_path();
  ClassificationData splits;
  ASSIGN_OR_RETURN(splits.train, data::open_mnist(dir, /*train=*/true));
  ASSIGN_OR_RETURN(splits.test, data::open_mnist(dir, /*train=*/false));
  splits.channels = 1;
  splits.num_classes = 10;
  splits.description = absl::StrCat("fashion-mnist (", dir, ")");
  set_transforms(splits, kFashionMnist, 28);
  return splits;
}

absl::StatusOr<ClassificationData> cifar10(const TaskConfig& config) {
  if (config.synthetic()) {
    ASSIGN_OR_RETURN(ClassificationData splits, synthetic_splits(config, 3, kSide, 50000, 10000));
    set_transforms(splits, kCifar10, kSide);
    return splits;
  }
  if (config.data_path().empty()) {
    return absl::InvalidArgumentError(
        "dataset CIFAR10 needs --data_path: the directory of data_batch_{1..5}.bin and "
        "test_batch.bin (the CIFAR-10 binary version)");
  }
  std::vector<std::string> train_files;
  for (int i = 1; i <= 5; ++i) {
    train_files.push_back(absl::StrCat(config.data_path(), "/data_batch_", i, ".bin"));
  }
  ClassificationData splits;
  ASSIGN_OR_RETURN(splits.train, data::CifarDataset::open(train_files, data::CifarKind::k10));
  ASSIGN_OR_RETURN(splits.test,
                   data::CifarDataset::open({absl::StrCat(config.data_path(), "/test_batch.bin")},
                                            data::CifarKind::k10));
  splits.channels = 3;
  splits.num_classes = 10;
  splits.description = absl::StrCat("cifar-10 (", config.data_path(), ")");
  set_transforms(splits, kCifar10, kSide);
  return splits;
}

}  // namespace

absl::StatusOr<ClassificationData> open_image_data(const TaskConfig& config) {
  switch (config.dataset()) {
    case TaskConfig::DATASET_DEFAULT:
    case TaskConfig::FASHION_MNIST:
      return fashion_mnist(config);
    case TaskConfig::CIFAR10:
      return cifar10(config);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("dataset ", TaskConfig::Dataset_Name(config.dataset()),
                       ": an image classification task reads FASHION_MNIST or CIFAR10"));
  }
}

}  // namespace ts::tasks
