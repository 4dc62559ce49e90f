// Pieces the CIFAR and ImageNet ResNets share: bias-free convolutions with
// "same" padding, and the weight initialization both use.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nn/conv2d.h"
#include "nn/module.h"

namespace ts::nn::models {

// kernel x kernel convolution without bias, padding kernel / 2.
absl::StatusOr<std::shared_ptr<Conv2d>> conv_no_bias(int64_t in_channels, int64_t out_channels,
                                                     int64_t kernel, int64_t stride = 1,
                                                     int64_t groups = 1);

// As torchvision and MLBench: every Conv2d weight kaiming_normal_(fan_out,
// relu); BatchNorm2d keeps weight 1 and bias 0; Linear keeps its default.
absl::Status init_resnet_weights(const Module& model);

}  // namespace ts::nn::models
