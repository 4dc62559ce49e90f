// ResNets for 32x32 images (He et al. 2015, CIFAR form) exactly as MLBench's
// ResNetCIFAR (version 1): 3x3 stem, three stages of (depth - 2) / 6 basic
// blocks at 16/32/64 channels, a 1x1 conv + BN projection shortcut where a
// stage downsamples, 8x8 average pool, linear classifier. State dict names
// are MLBench's ("prep.0.weight", "conv_2.0.downsample.0.weight",
// "classifier.bias").
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "nn/module.h"

namespace ts::nn::models {

// depth = 6n + 2 (20, 32, 44, 56, 110). Input [N, in_channels, 32, 32] (the
// final 8x8 pool fixes the size), output logits [N, num_classes].
absl::StatusOr<std::shared_ptr<Module>> resnet_cifar(int depth, int64_t num_classes = 10,
                                                     int64_t in_channels = 3);
// 272,474 parameters with 10 classes and 3 input channels.
absl::StatusOr<std::shared_ptr<Module>> resnet20(int64_t num_classes = 10,
                                                 int64_t in_channels = 3);

}  // namespace ts::nn::models
