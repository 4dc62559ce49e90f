#include "nn/models/resnet_common.h"

#include "nn/batch_norm.h"
#include "nn/init.h"
#include "tensor/status_macros.h"

namespace ts::nn::models {

absl::StatusOr<std::shared_ptr<Conv2d>> conv_no_bias(int64_t in_channels, int64_t out_channels,
                                                     int64_t kernel, int64_t stride,
                                                     int64_t groups) {
  functional::Conv2dOptions options;
  options.stride = {stride, stride};
  options.padding = {kernel / 2, kernel / 2};
  options.groups = groups;
  return Conv2d::create(in_channels, out_channels, {kernel, kernel}, options, /*bias=*/false);
}

absl::StatusOr<std::shared_ptr<Sequential>> projection_shortcut(int64_t in_channels,
                                                                int64_t out_channels,
                                                                int64_t stride) {
  ASSIGN_OR_RETURN(std::shared_ptr<Conv2d> proj, conv_no_bias(in_channels, out_channels, 1, stride));
  ASSIGN_OR_RETURN(std::shared_ptr<BatchNorm2d> proj_bn, BatchNorm2d::create(out_channels));
  return std::make_shared<Sequential>(
      std::vector<std::shared_ptr<Module>>{std::move(proj), std::move(proj_bn)});
}

absl::Status init_resnet_weights(const Module& model) {
  for (const auto& [name, m] : model.named_modules()) {
    if (m->type_name() != "Conv2d") continue;
    for (const auto& [param_name, p] : m->named_parameters()) {
      if (param_name != "weight") continue;
      RETURN_IF_ERROR(init::kaiming_normal_(p.data(), 0, init::FanMode::kFanOut,
                                            init::Nonlinearity::kRelu));
    }
  }
  return absl::OkStatus();
}

}  // namespace ts::nn::models
