#include "nn/models/resnet_common.h"

#include "nn/batch_norm.h"
#include "nn/init.h"

namespace ts::nn::models {

std::shared_ptr<Conv2d> conv_no_bias(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                                     int64_t groups) {
  functional::Conv2dOptions options;
  options.stride = {stride, stride};
  options.padding = {kernel / 2, kernel / 2};
  options.groups = groups;
  return std::make_shared<Conv2d>(in_channels, out_channels, std::array<int64_t, 2>{kernel, kernel}, options,
                                  /*bias=*/false);
}

std::shared_ptr<Sequential> projection_shortcut(int64_t in_channels, int64_t out_channels, int64_t stride) {
  return std::make_shared<Sequential>(conv_no_bias(in_channels, out_channels, 1, stride),
                                      std::make_shared<BatchNorm2d>(out_channels));
}

void init_resnet_weights(const Module& model) {
  for (const auto& [name, m] : model.named_modules()) {
    if (m->type_name() != "Conv2d") continue;
    for (const auto& [param_name, p] : m->named_parameters()) {
      if (param_name != "weight") continue;
      init::kaiming_normal_(p.data(), 0, init::FanMode::kFanOut, init::Nonlinearity::kRelu);
    }
  }
}

}  // namespace ts::nn::models
