// The ResNet-50 task's data: ImageNet-style JPEG folders read by
// data::ImageFolder with torchvision's reference transforms, or a synthetic
// set of the same shapes.
//   FASHION_MNIST_JPEG  Fashion-MNIST as real JPEGs in ImageNet's layout,
//                       built on first use in the cache (the offline default)
//   IMAGE_FOLDER        data_path/{train,val}/<class>/*.JPEG (ImageNet)
//   --synthetic         learnable random images [3, image_size, image_size]
//                       of the dataset's class count, for throughput
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "data/sets/image_folder.h"
#include "tasks/common/config.pb.h"
#include "tasks/common/recipe.h"

namespace ts::tasks {

struct ImageNetData {
  TrainingData data;
  int64_t num_classes = 0;
  // The folders' datasets (null for synthetic data), for the count of
  // corrupt files skipped.
  std::shared_ptr<const data::ImageFolder> train_folder, val_folder;
};

absl::StatusOr<ImageNetData> open_imagenet_data(const TaskConfig& config);

}  // namespace ts::tasks
