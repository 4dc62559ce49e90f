// Conv2d: 2-D convolution over [N, C, H, W] (nn/functional.h's conv2d: groups,
// stride, padding, dilation), with PyTorch's default initialization (weight
// kaiming_uniform_(a = sqrt(5)), bias uniform in +-1/sqrt(fan_in)).
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "nn/functional.h"
#include "nn/module.h"

namespace ts::nn {

class Conv2d final : public Module {
 public:
  // weight [out_channels, in_channels / groups, kernel[0], kernel[1]], bias
  // [out_channels] when `bias`. Channels must divide by options.groups.
  static absl::StatusOr<std::shared_ptr<Conv2d>> create(int64_t in_channels,
                                                        int64_t out_channels,
                                                        std::array<int64_t, 2> kernel,
                                                        functional::Conv2dOptions options = {},
                                                        bool bias = true);
  absl::StatusOr<Variable> forward(const Variable& x) override;

  const functional::Conv2dOptions& options() const { return options_; }

 private:
  Conv2d(functional::Conv2dOptions options) : Module("Conv2d"), options_(options) {}
  functional::Conv2dOptions options_;
};

}  // namespace ts::nn
