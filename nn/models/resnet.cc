#include "nn/models/resnet.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "nn/batch_norm.h"
#include "nn/linear.h"
#include "nn/models/resnet_common.h"
#include "nn/pooling.h"
#include "nn/sequential.h"
#include "tensor/status_macros.h"

namespace ts::nn::models {
namespace {

constexpr int64_t kExpansion = 4;

// relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x))))))) + shortcut(x)), the
// 3x3 conv2 grouped and carrying the stride.
class Bottleneck final : public Module {
 public:
  static absl::StatusOr<std::shared_ptr<Bottleneck>> create(int64_t in_channels, int64_t planes,
                                                            int64_t stride, int64_t groups,
                                                            int64_t width_per_group) {
    const int64_t width = planes * width_per_group / 64 * groups;
    const int64_t out_channels = planes * kExpansion;
    std::shared_ptr<Bottleneck> b(new Bottleneck());
    ASSIGN_OR_RETURN(std::shared_ptr<Conv2d> conv1, conv_no_bias(in_channels, width, 1));
    ASSIGN_OR_RETURN(std::shared_ptr<BatchNorm2d> bn1, BatchNorm2d::create(width));
    ASSIGN_OR_RETURN(std::shared_ptr<Conv2d> conv2, conv_no_bias(width, width, 3, stride, groups));
    ASSIGN_OR_RETURN(std::shared_ptr<BatchNorm2d> bn2, BatchNorm2d::create(width));
    ASSIGN_OR_RETURN(std::shared_ptr<Conv2d> conv3, conv_no_bias(width, out_channels, 1));
    ASSIGN_OR_RETURN(std::shared_ptr<BatchNorm2d> bn3, BatchNorm2d::create(out_channels));
    b->path_ = {b->register_module("conv1", conv1), b->register_module("bn1", bn1),
                b->register_module("conv2", conv2), b->register_module("bn2", bn2),
                b->register_module("conv3", conv3), b->register_module("bn3", bn3)};
    if (stride != 1 || in_channels != out_channels) {
      ASSIGN_OR_RETURN(std::shared_ptr<Sequential> shortcut,
                       projection_shortcut(in_channels, out_channels, stride));
      b->downsample_ = b->register_module("downsample", shortcut);
    }
    return b;
  }

  absl::StatusOr<Variable> forward(const Variable& x) override {
    Variable shortcut = x;
    if (downsample_ != nullptr) {
      ASSIGN_OR_RETURN(shortcut, downsample_->forward(x));
    }
    Variable y = x;
    for (size_t i = 0; i < path_.size(); ++i) {
      ASSIGN_OR_RETURN(y, path_[i]->forward(y));
      // ReLU after bn1 and bn2; the last one waits for the shortcut.
      if (i == 1 || i == 3) {
        ASSIGN_OR_RETURN(y, autograd::relu(y));
      }
    }
    ASSIGN_OR_RETURN(y, autograd::add(y, shortcut));
    return autograd::relu(y);
  }

 private:
  Bottleneck() : Module("Bottleneck") {}
  std::vector<std::shared_ptr<Module>> path_;  // conv1, bn1, conv2, bn2, conv3, bn3
  std::shared_ptr<Sequential> downsample_;
};

class ResNet final : public Module {
 public:
  static absl::StatusOr<std::shared_ptr<ResNet>> create(const ResNetConfig& c) {
    std::shared_ptr<ResNet> m(new ResNet());
    ASSIGN_OR_RETURN(std::shared_ptr<Conv2d> conv1, conv_no_bias(3, 64, 7, 2));
    ASSIGN_OR_RETURN(std::shared_ptr<BatchNorm2d> bn1, BatchNorm2d::create(64));
    m->conv1_ = m->register_module("conv1", conv1);
    m->bn1_ = m->register_module("bn1", bn1);
    functional::Pool2dOptions pool;
    pool.kernel = {3, 3};
    pool.stride = {2, 2};
    pool.padding = {1, 1};
    m->maxpool_ = m->register_module("maxpool", std::make_shared<MaxPool2d>(pool));
    int64_t in = 64;
    for (int stage = 0; stage < 4; ++stage) {
      const int64_t planes = int64_t{64} << stage;
      auto layer = std::make_shared<Sequential>();
      for (int i = 0; i < c.layers[stage]; ++i) {
        const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
        ASSIGN_OR_RETURN(std::shared_ptr<Bottleneck> block,
                         Bottleneck::create(in, planes, stride, c.groups, c.width_per_group));
        layer->push_back(std::move(block));
        in = planes * kExpansion;
      }
      m->stages_.push_back(m->register_module(absl::StrCat("layer", stage + 1), layer));
    }
    m->avgpool_ =
        m->register_module("avgpool", std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}));
    ASSIGN_OR_RETURN(std::shared_ptr<Linear> fc, Linear::create(in, c.num_classes));
    m->fc_ = m->register_module("fc", fc);
    RETURN_IF_ERROR(init_resnet_weights(*m));
    return m;
  }

  absl::StatusOr<Variable> forward(const Variable& x) override {
    ASSIGN_OR_RETURN(Variable y, conv1_->forward(x));
    ASSIGN_OR_RETURN(y, bn1_->forward(y));
    ASSIGN_OR_RETURN(y, autograd::relu(y));
    ASSIGN_OR_RETURN(y, maxpool_->forward(y));
    for (const auto& stage : stages_) {
      ASSIGN_OR_RETURN(y, stage->forward(y));
    }
    ASSIGN_OR_RETURN(y, avgpool_->forward(y));
    ASSIGN_OR_RETURN(y, autograd::flatten(y, 1));
    return fc_->forward(y);
  }

 private:
  ResNet() : Module("ResNet") {}
  std::shared_ptr<Conv2d> conv1_;
  std::shared_ptr<BatchNorm2d> bn1_;
  std::shared_ptr<MaxPool2d> maxpool_;
  std::vector<std::shared_ptr<Sequential>> stages_;
  std::shared_ptr<AdaptiveAvgPool2d> avgpool_;
  std::shared_ptr<Linear> fc_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<Module>> resnet(const ResNetConfig& config) {
  for (int blocks : config.layers) {
    if (blocks < 1) {
      return absl::InvalidArgumentError("resnet: every stage needs at least one block");
    }
  }
  if (config.groups < 1 || config.width_per_group < 1 || config.num_classes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resnet: groups (", config.groups, "), width_per_group (", config.width_per_group,
        ") and num_classes (", config.num_classes, ") must be positive"));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ResNet> m, ResNet::create(config));
  return m;
}

absl::StatusOr<std::shared_ptr<Module>> resnet50(int64_t num_classes) {
  return resnet({{3, 4, 6, 3}, 1, 64, num_classes});
}

absl::StatusOr<std::shared_ptr<Module>> resnet101(int64_t num_classes) {
  return resnet({{3, 4, 23, 3}, 1, 64, num_classes});
}

absl::StatusOr<std::shared_ptr<Module>> resnext50_32x4d(int64_t num_classes) {
  return resnet({{3, 4, 6, 3}, 32, 4, num_classes});
}

absl::StatusOr<std::shared_ptr<Module>> resnext101_32x8d(int64_t num_classes) {
  return resnet({{3, 4, 23, 3}, 32, 8, num_classes});
}

}  // namespace ts::nn::models
