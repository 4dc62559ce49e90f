// The image datasets the classification tasks read, at 32x32 with their
// augmentations: Fashion-MNIST (the default; Debian's dataset-fashion-mnist),
// CIFAR-10 binary batches, or a learnable synthetic set of either's shapes.
#pragma once

#include "absl/status/statusor.h"
#include "tasks/common/classification.h"
#include "tasks/common/config.pb.h"

namespace ts::tasks {

// From config.dataset / data_path / synthetic:
//   FASHION_MNIST (the default): IDX files in data_path, else Debian's
//     dataset-fashion-mnist; 28x28 padded to 32x32 (then random crop with
//     padding 4 and horizontal flip for training).
//   CIFAR10: data_batch_{1..5}.bin and test_batch.bin in data_path.
//   synthetic: a learnable set with the chosen dataset's shapes.
absl::StatusOr<ClassificationData> open_image_data(const TaskConfig& config);

}  // namespace ts::tasks
