// ResNets for 32x32 images (He et al. 2015, CIFAR form) exactly as MLBench's
// ResNetCIFAR (version 1): 3x3 stem, three stages of (depth - 2) / 6 basic
// blocks at 16/32/64 channels, a 1x1 conv + BN projection shortcut where a
// stage downsamples, 8x8 average pool, linear classifier. State dict names
// are MLBench's ("prep.0.weight", "conv_2.0.downsample.0.weight",
// "classifier.bias").
#pragma once

#include <cstdint>
#include <memory>

#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/pooling.h"
#include "nn/sequential.h"

namespace ts::nn::models {

// Post-activation basic block: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)),
// the shortcut a projection ("downsample") where the block strides.
class BasicBlock final : public Module {
 public:
  BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride);
  Variable forward(const Variable& x);

 private:
  Handle<Conv2d> conv1_;
  Handle<BatchNorm2d> bn1_;
  Handle<Conv2d> conv2_;
  Handle<BatchNorm2d> bn2_;
  Handle<Sequential> downsample_;  // absent where the block keeps the shape
};

class ResNetCifar final : public Module {
 public:
  // depth = 6n + 2 (20, 32, 44, 56, 110); anything else throws.
  explicit ResNetCifar(int depth, int64_t num_classes = 10, int64_t in_channels = 3);
  // x [N, in_channels, 32, 32] (the final 8x8 pool fixes the size) -> logits
  // [N, num_classes].
  Variable forward(const Variable& x);

 private:
  Handle<Sequential> prep_;                      // conv, BN, ReLU
  Handle<Sequential> conv_1_, conv_2_, conv_3_;  // the stages of BasicBlocks
  Handle<AvgPool2d> avgpool_;
  Handle<Linear> classifier_;
};

std::shared_ptr<ResNetCifar> resnet_cifar(int depth, int64_t num_classes = 10, int64_t in_channels = 3);
// 272,474 parameters with 10 classes and 3 input channels.
std::shared_ptr<ResNetCifar> resnet20(int64_t num_classes = 10, int64_t in_channels = 3);

}  // namespace ts::nn::models
