// Pieces the CIFAR and ImageNet ResNets share: bias-free convolutions with
// "same" padding, the projection shortcut, and the weight initialization.
#pragma once

#include <cstdint>
#include <memory>

#include "nn/conv.h"
#include "nn/module.h"
#include "nn/sequential.h"

namespace ts::nn::models {

// kernel x kernel convolution without bias, padding kernel / 2.
std::shared_ptr<Conv2d> conv_no_bias(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride = 1,
                                     int64_t groups = 1);

// The shortcut of a block that changes shape: 1x1 conv (stride) + BN, named
// "downsample.0" and "downsample.1" as in torchvision and MLBench.
std::shared_ptr<Sequential> projection_shortcut(int64_t in_channels, int64_t out_channels, int64_t stride);

// As torchvision and MLBench: every Conv2d weight kaiming_normal_(fan_out,
// relu); BatchNorm2d keeps weight 1 and bias 0; Linear keeps its default.
void init_resnet_weights(const Module& model);

}  // namespace ts::nn::models
