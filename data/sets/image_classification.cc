#include "data/sets/image_classification.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/readers/cifar.h"
#include "data/readers/idx.h"
#include "data/synthetic/images.h"
#include "data/transforms/image.h"

namespace ts::data {
namespace {

constexpr int64_t kSide = 32;

struct Normalization {
  std::vector<float> mean, std;
};

// Per-channel statistics: Fashion-MNIST's training set at 28x28 (before the
// padding); CIFAR-10's as MLBench's CIFAR10V1 normalizes (its std, the
// widely copied 0.2023, 0.1994, 0.2010, is not the set's own 0.247, 0.243,
// 0.261, but it is the recipe's).
const Normalization kFashionMnist = {{0.2860f}, {0.3530f}};
const Normalization kCifar10 = {{0.4914f, 0.4822f, 0.4465f}, {0.2023f, 0.1994f, 0.2010f}};

// Pads smaller images to 32x32 first (Fashion-MNIST's 28x28).
void set_transforms(ImageClassificationData& splits, const Normalization& norm, int64_t side) {
  std::vector<Transform> train, test;
  if (side < kSide) {
    train.push_back(transforms::pad_to(kSide, kSide));
    test.push_back(transforms::pad_to(kSide, kSide));
  }
  train.push_back(transforms::random_crop(kSide, kSide, 4));
  train.push_back(transforms::random_horizontal_flip());
  train.push_back(transforms::normalize(norm.mean, norm.std));
  test.push_back(transforms::normalize(norm.mean, norm.std));
  splits.train_transform = compose(std::move(train));
  splits.test_transform = compose(std::move(test));
}

absl::StatusOr<ImageClassificationData> synthetic_splits(uint64_t seed, int64_t channels, int64_t side,
                                                         int64_t train_size, int64_t test_size) {
  ImageClassificationData splits;
  SyntheticImageOptions options;
  options.channels = channels;
  options.height = options.width = side;
  options.size = train_size;
  options.seed = seed;
  ASSIGN_OR_RETURN(splits.train, SyntheticImages::create(options));
  options.size = test_size;
  options.first_sample = train_size;  // same class templates, unseen samples
  ASSIGN_OR_RETURN(splits.test, SyntheticImages::create(options));
  splits.channels = channels;
  splits.num_classes = 10;
  splits.description = absl::StrCat("synthetic ", channels, "x", side, "x", side, " (seed ", seed, ")");
  return splits;
}

absl::StatusOr<ImageClassificationData> fashion_mnist(const ImageClassificationOptions& o) {
  ImageClassificationData splits;
  if (o.synthetic) {
    ASSIGN_OR_RETURN(splits, synthetic_splits(o.seed, 1, 28, 60000, 10000));
  } else {
    const std::string dir = o.path.empty() ? kFashionMnistDir : o.path;
    ASSIGN_OR_RETURN(splits.train, open_mnist(dir, /*train=*/true));
    ASSIGN_OR_RETURN(splits.test, open_mnist(dir, /*train=*/false));
    splits.channels = 1;
    splits.num_classes = 10;
    splits.description = absl::StrCat("fashion-mnist (", dir, ")");
  }
  set_transforms(splits, kFashionMnist, 28);
  return splits;
}

absl::StatusOr<ImageClassificationData> cifar10(const ImageClassificationOptions& o) {
  ImageClassificationData splits;
  if (o.synthetic) {
    ASSIGN_OR_RETURN(splits, synthetic_splits(o.seed, 3, kSide, 50000, 10000));
  } else {
    if (o.path.empty()) {
      return absl::InvalidArgumentError(
          "dataset CIFAR10 needs --data_path: the directory of data_batch_{1..5}.bin and "
          "test_batch.bin (the CIFAR-10 binary version)");
    }
    std::vector<std::string> train_files;
    for (int i = 1; i <= 5; ++i) train_files.push_back(absl::StrCat(o.path, "/data_batch_", i, ".bin"));
    ASSIGN_OR_RETURN(splits.train, CifarDataset::open(train_files, CifarKind::k10));
    ASSIGN_OR_RETURN(splits.test, CifarDataset::open({absl::StrCat(o.path, "/test_batch.bin")}, CifarKind::k10));
    splits.channels = 3;
    splits.num_classes = 10;
    splits.description = absl::StrCat("cifar-10 (", o.path, ")");
  }
  set_transforms(splits, kCifar10, kSide);
  return splits;
}

}  // namespace

absl::StatusOr<ImageClassificationData> open_image_classification(const ImageClassificationOptions& options) {
  switch (options.set) {
    case ImageSet::kFashionMnist:
      return fashion_mnist(options);
    case ImageSet::kCifar10:
      return cifar10(options);
  }
  return absl::InvalidArgumentError("unknown image set");
}

}  // namespace ts::data
