// ImageNet ResNets and ResNeXts as torchvision builds them (Bottleneck blocks
// with the stride on the 3x3 conv, "v1.5"; 1x1 conv + BN projection
// shortcuts): the same parameter counts and state dict names ("conv1.weight",
// "layer1.0.downsample.0.weight", "fc.bias").
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "nn/module.h"

namespace ts::nn::models {

struct ResNetConfig {
  std::array<int, 4> layers = {3, 4, 6, 3};  // bottleneck blocks per stage
  int64_t groups = 1;                         // of each 3x3 conv (ResNeXt cardinality)
  int64_t width_per_group = 64;
  int64_t num_classes = 1000;
};

// Input [N, 3, H, W] (224x224 for ImageNet; any size >= 32 works thanks to
// the adaptive pool), output logits [N, num_classes].
absl::StatusOr<std::shared_ptr<Module>> resnet(const ResNetConfig& config);

absl::StatusOr<std::shared_ptr<Module>> resnet50(int64_t num_classes = 1000);          // 25,557,032
absl::StatusOr<std::shared_ptr<Module>> resnet101(int64_t num_classes = 1000);         // 44,549,160
absl::StatusOr<std::shared_ptr<Module>> resnext50_32x4d(int64_t num_classes = 1000);   // 25,028,904
absl::StatusOr<std::shared_ptr<Module>> resnext101_32x8d(int64_t num_classes = 1000);  // 88,791,336

}  // namespace ts::nn::models
