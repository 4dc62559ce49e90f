// ImageNet ResNets and ResNeXts as torchvision builds them (Bottleneck blocks
// with the stride on the 3x3 conv, "v1.5"; 1x1 conv + BN projection
// shortcuts): the same parameter counts and state dict names ("conv1.weight",
// "layer1.0.downsample.0.weight", "fc.bias").
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/pooling.h"
#include "nn/sequential.h"

namespace ts::nn::models {

struct ResNetConfig {
  std::array<int, 4> layers = {3, 4, 6, 3};  // bottleneck blocks per stage
  int64_t groups = 1;                        // of each 3x3 conv (ResNeXt cardinality)
  int64_t width_per_group = 64;
  int64_t num_classes = 1000;
};

// relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + shortcut(x)), the
// 3x3 conv2 grouped and carrying the stride; out_channels = 4 * planes.
class Bottleneck final : public Module {
 public:
  static constexpr int64_t kExpansion = 4;

  Bottleneck(int64_t in_channels, int64_t planes, int64_t stride, int64_t groups, int64_t width_per_group);
  Variable forward(const Variable& x);

 private:
  Handle<Conv2d> conv1_;
  Handle<BatchNorm2d> bn1_;
  Handle<Conv2d> conv2_;
  Handle<BatchNorm2d> bn2_;
  Handle<Conv2d> conv3_;
  Handle<BatchNorm2d> bn3_;
  Handle<Sequential> downsample_;  // absent where the block keeps the shape
};

class ResNet final : public Module {
 public:
  // Every stage needs a block; groups, width_per_group and num_classes must
  // be positive.
  explicit ResNet(const ResNetConfig& config);
  // x [N, 3, H, W] (224x224 for ImageNet; any size >= 32 works thanks to the
  // adaptive pool) -> logits [N, num_classes].
  Variable forward(const Variable& x);

 private:
  Handle<Conv2d> conv1_;
  Handle<BatchNorm2d> bn1_;
  Handle<MaxPool2d> maxpool_;
  Handle<Sequential> layer1_, layer2_, layer3_, layer4_;  // the stages of Bottlenecks
  Handle<AdaptiveAvgPool2d> avgpool_;
  Handle<Linear> fc_;
};

std::shared_ptr<ResNet> resnet(const ResNetConfig& config);

// By torchvision's name ("resnet50", "resnet101", "resnext50_32x4d",
// "resnext101_32x8d") or "resnet_tiny" (one narrow bottleneck per stage, for
// tests and smoke runs); throws kInvalidArgument naming the known names.
std::shared_ptr<ResNet> resnet(absl::string_view name, int64_t num_classes = 1000);
std::vector<std::string> resnet_names();

std::shared_ptr<ResNet> resnet50(int64_t num_classes = 1000);          // 25,557,032
std::shared_ptr<ResNet> resnet101(int64_t num_classes = 1000);         // 44,549,160
std::shared_ptr<ResNet> resnext50_32x4d(int64_t num_classes = 1000);   // 25,028,904
std::shared_ptr<ResNet> resnext101_32x8d(int64_t num_classes = 1000);  // 88,791,336

}  // namespace ts::nn::models
