#include "nn/models/resnet.h"

#include "absl/strings/str_join.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "nn/models/resnet_common.h"

namespace ts::nn::models {
namespace {

// `blocks` bottlenecks of `planes`, the first one striding (and projecting).
std::shared_ptr<Sequential> stage(int64_t in_channels, int64_t planes, int blocks, int64_t stride,
                                  const ResNetConfig& c) {
  auto layer = std::make_shared<Sequential>();
  for (int i = 0; i < blocks; ++i) {
    layer->push_back(std::make_shared<Bottleneck>(i == 0 ? in_channels : planes * Bottleneck::kExpansion, planes,
                                                  i == 0 ? stride : 1, c.groups, c.width_per_group));
  }
  return layer;
}

}  // namespace

Bottleneck::Bottleneck(int64_t in_channels, int64_t planes, int64_t stride, int64_t groups, int64_t width_per_group)
    : Module("Bottleneck") {
  const int64_t width = planes * width_per_group / 64 * groups;
  const int64_t out_channels = planes * kExpansion;
  conv1_ = register_module("conv1", conv_no_bias(in_channels, width, 1));
  bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(width));
  conv2_ = register_module("conv2", conv_no_bias(width, width, 3, stride, groups));
  bn2_ = register_module("bn2", std::make_shared<BatchNorm2d>(width));
  conv3_ = register_module("conv3", conv_no_bias(width, out_channels, 1));
  bn3_ = register_module("bn3", std::make_shared<BatchNorm2d>(out_channels));
  if (stride != 1 || in_channels != out_channels) {
    downsample_ = register_module("downsample", projection_shortcut(in_channels, out_channels, stride));
  }
}

Variable Bottleneck::forward(const Variable& x) {
  const Variable shortcut = downsample_ ? downsample_(x) : x;
  // forward_relu(v, s) = relu(bn(v) + s), one kernel on cuDNN.
  Variable y = bn1_->forward_relu(conv1_(x));
  y = bn2_->forward_relu(conv2_(y));
  return bn3_->forward_relu(conv3_(y), shortcut);
}

ResNet::ResNet(const ResNetConfig& config) : Module("ResNet") {
  for (int blocks : config.layers) TS_CHECK(blocks >= 1, "ResNet: every stage needs at least one block");
  TS_CHECK(config.groups >= 1 && config.width_per_group >= 1 && config.num_classes >= 1, "ResNet: groups (",
           config.groups, "), width_per_group (", config.width_per_group, ") and num_classes (", config.num_classes,
           ") must be positive");
  conv1_ = register_module("conv1", conv_no_bias(3, 64, 7, 2));
  bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(64));
  functional::Pool2dOptions pool;
  pool.kernel = {3, 3};
  pool.stride = {2, 2};
  pool.padding = {1, 1};
  maxpool_ = register_module("maxpool", std::make_shared<MaxPool2d>(pool));
  const std::array<int, 4>& blocks = config.layers;
  constexpr int64_t kExpansion = Bottleneck::kExpansion;
  layer1_ = register_module("layer1", stage(64, 64, blocks[0], 1, config));
  layer2_ = register_module("layer2", stage(64 * kExpansion, 128, blocks[1], 2, config));
  layer3_ = register_module("layer3", stage(128 * kExpansion, 256, blocks[2], 2, config));
  layer4_ = register_module("layer4", stage(256 * kExpansion, 512, blocks[3], 2, config));
  avgpool_ = register_module("avgpool", std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
  fc_ = register_module("fc", std::make_shared<Linear>(512 * kExpansion, config.num_classes));
  init_resnet_weights(*this);
}

Variable ResNet::forward(const Variable& x) {
  const Variable stem = maxpool_(bn1_->forward_relu(conv1_(x)));
  const Variable features = layer4_(layer3_(layer2_(layer1_(stem))));
  return fc_(flatten(avgpool_(features), 1));
}

std::shared_ptr<ResNet> resnet(const ResNetConfig& config) { return std::make_shared<ResNet>(config); }

namespace {

struct NamedConfig {
  const char* name;
  ResNetConfig config;  // num_classes set by the caller
};

// torchvision's configurations, and a narrow one-block-per-stage model that
// runs every layer kind in a fraction of the time (tests, smoke runs).
constexpr NamedConfig kNamedConfigs[] = {
    {"resnet50", {{3, 4, 6, 3}, 1, 64, 1000}},        {"resnet101", {{3, 4, 23, 3}, 1, 64, 1000}},
    {"resnext50_32x4d", {{3, 4, 6, 3}, 32, 4, 1000}}, {"resnext101_32x8d", {{3, 4, 23, 3}, 32, 8, 1000}},
    {"resnet_tiny", {{1, 1, 1, 1}, 1, 16, 1000}},
};

}  // namespace

std::vector<std::string> resnet_names() {
  std::vector<std::string> names;
  for (const NamedConfig& c : kNamedConfigs) names.emplace_back(c.name);
  return names;
}

std::shared_ptr<ResNet> resnet(absl::string_view name, int64_t num_classes) {
  for (const NamedConfig& c : kNamedConfigs) {
    if (name != c.name) continue;
    ResNetConfig config = c.config;
    config.num_classes = num_classes;
    return resnet(config);
  }
  throw_error(absl::StatusCode::kInvalidArgument, "unknown model '", name,
              "' (known: ", absl::StrJoin(resnet_names(), ", "), ")");
}

std::shared_ptr<ResNet> resnet50(int64_t num_classes) { return resnet("resnet50", num_classes); }

std::shared_ptr<ResNet> resnet101(int64_t num_classes) { return resnet("resnet101", num_classes); }

std::shared_ptr<ResNet> resnext50_32x4d(int64_t num_classes) { return resnet("resnext50_32x4d", num_classes); }

std::shared_ptr<ResNet> resnext101_32x8d(int64_t num_classes) { return resnet("resnext101_32x8d", num_classes); }

}  // namespace ts::nn::models
