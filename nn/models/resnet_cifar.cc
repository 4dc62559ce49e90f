#include "nn/models/resnet_cifar.h"

#include "autograd/ops.h"
#include "base/error.h"
#include "nn/models/resnet_common.h"
#include "nn/relu.h"

namespace ts::nn::models {
namespace {

// `blocks` basic blocks, the first one striding (and widening).
std::shared_ptr<Sequential> stage(int64_t in_channels, int64_t out_channels, int blocks, int64_t stride) {
  auto layer = std::make_shared<Sequential>();
  for (int i = 0; i < blocks; ++i) {
    layer->push_back(
        std::make_shared<BasicBlock>(i == 0 ? in_channels : out_channels, out_channels, i == 0 ? stride : 1));
  }
  return layer;
}

}  // namespace

BasicBlock::BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride) : Module("BasicBlock") {
  conv1_ = register_module("conv1", conv_no_bias(in_channels, out_channels, 3, stride));
  bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(out_channels));
  conv2_ = register_module("conv2", conv_no_bias(out_channels, out_channels, 3));
  bn2_ = register_module("bn2", std::make_shared<BatchNorm2d>(out_channels));
  // MLBench projects only where the stage downsamples (and so widens).
  if (stride != 1) {
    downsample_ = register_module("downsample", projection_shortcut(in_channels, out_channels, stride));
  }
}

Variable BasicBlock::forward(const Variable& x) {
  const Variable shortcut = downsample_ ? downsample_(x) : x;
  // forward_relu(v, s) = relu(bn(v) + s), one kernel on cuDNN.
  const Variable y = bn1_->forward_relu(conv1_(x));
  return bn2_->forward_relu(conv2_(y), shortcut);
}

ResNetCifar::ResNetCifar(int depth, int64_t num_classes, int64_t in_channels) : Module("ResNetCifar") {
  TS_CHECK(depth >= 8 && depth % 6 == 2, "ResNetCifar: depth ", depth, " is not 6n + 2 with n >= 1");
  prep_ = register_module(
      "prep", std::make_shared<Sequential>(conv_no_bias(in_channels, 16, 3), std::make_shared<BatchNorm2d>(16),
                                           std::make_shared<ReLU>()));
  const int blocks = (depth - 2) / 6;
  conv_1_ = register_module("conv_1", stage(16, 16, blocks, 1));
  conv_2_ = register_module("conv_2", stage(16, 32, blocks, 2));
  conv_3_ = register_module("conv_3", stage(32, 64, blocks, 2));
  functional::Pool2dOptions pool;
  pool.kernel = {8, 8};
  pool.stride = {8, 8};
  avgpool_ = register_module("avgpool", std::make_shared<AvgPool2d>(pool));
  classifier_ = register_module("classifier", std::make_shared<Linear>(64, num_classes));
  init_resnet_weights(*this);
}

Variable ResNetCifar::forward(const Variable& x) {
  const Variable features = conv_3_(conv_2_(conv_1_(prep_(x))));
  return classifier_(flatten(avgpool_(features), 1));
}

std::shared_ptr<ResNetCifar> resnet_cifar(int depth, int64_t num_classes, int64_t in_channels) {
  return std::make_shared<ResNetCifar>(depth, num_classes, in_channels);
}

std::shared_ptr<ResNetCifar> resnet20(int64_t num_classes, int64_t in_channels) {
  return resnet_cifar(20, num_classes, in_channels);
}

}  // namespace ts::nn::models
