// The image classification sets of the ResNet tasks at 32x32, with their
// splits and augmentations: Fashion-MNIST (Debian's dataset-fashion-mnist;
// 28x28 padded to 32x32), CIFAR-10 binary batches, or a learnable synthetic
// set of either's shapes. Training adds a random crop with padding 4 and a
// horizontal flip; both splits normalize with fixed channel statistics
// (CIFAR-10's MLBench's, Fashion-MNIST's those of its unpadded images).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "data/dataset.h"
#include "data/loader/transform.h"

namespace ts::data {

enum class ImageSet { kFashionMnist, kCifar10 };

struct ImageClassificationOptions {
  ImageSet set = ImageSet::kFashionMnist;
  // Fashion-MNIST: the folder of its IDX files (empty: Debian's); CIFAR-10:
  // the folder of data_batch_{1..5}.bin and test_batch.bin (required).
  std::string path;
  bool synthetic = false;  // the set's shapes, learnable random images
  uint64_t seed = 0;       // of the synthetic set
};

struct ImageClassificationData {
  std::shared_ptr<const Dataset> train, test;  // examples {image, i64 label}
  Transform train_transform, test_transform;
  int64_t channels = 0;
  int64_t num_classes = 0;
  std::string description;  // "fashion-mnist (/usr/share/...)"
};

absl::StatusOr<ImageClassificationData> open_image_classification(const ImageClassificationOptions& options);

}  // namespace ts::data
