#include "nn/models/resnet_cifar.h"

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "nn/batch_norm.h"
#include "nn/linear.h"
#include "nn/models/resnet_common.h"
#include "nn/pooling.h"
#include "nn/relu.h"
#include "nn/sequential.h"
#include "tensor/status_macros.h"

namespace ts::nn::models {
namespace {

// Post-activation basic block: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)).
class BasicBlock final : public Module {
 public:
  static absl::StatusOr<std::shared_ptr<BasicBlock>> create(int64_t in_channels,
                                                            int64_t out_channels, int64_t stride) {
    std::shared_ptr<BasicBlock> b(new BasicBlock());
    ASSIGN_OR_RETURN(b->conv1_, conv_no_bias(in_channels, out_channels, 3, stride));
    ASSIGN_OR_RETURN(b->bn1_, BatchNorm2d::create(out_channels));
    ASSIGN_OR_RETURN(b->conv2_, conv_no_bias(out_channels, out_channels, 3));
    ASSIGN_OR_RETURN(b->bn2_, BatchNorm2d::create(out_channels));
    b->register_module("conv1", b->conv1_);
    b->register_module("bn1", b->bn1_);
    b->register_module("conv2", b->conv2_);
    b->register_module("bn2", b->bn2_);
    // MLBench projects only where the stage downsamples (and so widens).
    if (stride != 1) {
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
    ASSIGN_OR_RETURN(Variable y, conv1_->forward(x));
    ASSIGN_OR_RETURN(y, bn1_->forward(y));
    ASSIGN_OR_RETURN(y, autograd::relu(y));
    ASSIGN_OR_RETURN(y, conv2_->forward(y));
    ASSIGN_OR_RETURN(y, bn2_->forward(y));
    ASSIGN_OR_RETURN(y, autograd::add(y, shortcut));
    return autograd::relu(y);
  }

 private:
  BasicBlock() : Module("BasicBlock") {}
  std::shared_ptr<Conv2d> conv1_, conv2_;
  std::shared_ptr<BatchNorm2d> bn1_, bn2_;
  std::shared_ptr<Sequential> downsample_;
};

class ResNetCIFAR final : public Module {
 public:
  static absl::StatusOr<std::shared_ptr<ResNetCIFAR>> create(int depth, int64_t num_classes,
                                                             int64_t in_channels) {
    std::shared_ptr<ResNetCIFAR> m(new ResNetCIFAR());
    ASSIGN_OR_RETURN(std::shared_ptr<Conv2d> stem, conv_no_bias(in_channels, 16, 3));
    ASSIGN_OR_RETURN(std::shared_ptr<BatchNorm2d> stem_bn, BatchNorm2d::create(16));
    m->prep_ = m->register_module(
        "prep", std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
                    std::move(stem), std::move(stem_bn), std::make_shared<ReLU>()}));
    const int blocks = (depth - 2) / 6;
    const int64_t widths[3] = {16, 32, 64};
    int64_t in = 16;
    for (int stage = 0; stage < 3; ++stage) {
      auto layer = std::make_shared<Sequential>();
      for (int i = 0; i < blocks; ++i) {
        const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
        ASSIGN_OR_RETURN(std::shared_ptr<BasicBlock> block,
                         BasicBlock::create(in, widths[stage], stride));
        layer->push_back(std::move(block));
        in = widths[stage];
      }
      m->stages_.push_back(m->register_module(absl::StrCat("conv_", stage + 1), layer));
    }
    functional::Pool2dOptions pool;
    pool.kernel = {8, 8};
    pool.stride = {8, 8};
    m->avgpool_ = m->register_module("avgpool", std::make_shared<AvgPool2d>(pool));
    ASSIGN_OR_RETURN(std::shared_ptr<Linear> fc, Linear::create(64, num_classes));
    m->classifier_ = m->register_module("classifier", fc);
    RETURN_IF_ERROR(init_resnet_weights(*m));
    return m;
  }

  absl::StatusOr<Variable> forward(const Variable& x) override {
    ASSIGN_OR_RETURN(Variable y, prep_->forward(x));
    for (const auto& stage : stages_) {
      ASSIGN_OR_RETURN(y, stage->forward(y));
    }
    ASSIGN_OR_RETURN(y, avgpool_->forward(y));
    ASSIGN_OR_RETURN(y, autograd::flatten(y, 1));
    return classifier_->forward(y);
  }

 private:
  ResNetCIFAR() : Module("ResNetCIFAR") {}
  std::shared_ptr<Sequential> prep_;
  std::vector<std::shared_ptr<Sequential>> stages_;
  std::shared_ptr<AvgPool2d> avgpool_;
  std::shared_ptr<Linear> classifier_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<Module>> resnet_cifar(int depth, int64_t num_classes,
                                                     int64_t in_channels) {
  if (depth < 8 || depth % 6 != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("resnet_cifar: depth ", depth, " is not 6n + 2 with n >= 1"));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ResNetCIFAR> m,
                   ResNetCIFAR::create(depth, num_classes, in_channels));
  return m;
}

absl::StatusOr<std::shared_ptr<Module>> resnet20(int64_t num_classes, int64_t in_channels) {
  return resnet_cifar(20, num_classes, in_channels);
}

}  // namespace ts::nn::models
