// Conv2d: 2-D convolution over [N, C, H, W] (nn/functional.h's conv2d: groups,
// stride, padding, dilation), with PyTorch's default initialization (weight
// kaiming_uniform_(a = sqrt(5)), bias uniform in +-1/sqrt(fan_in)).
#pragma once

#include <array>
#include <cstdint>

#include "nn/functional.h"
#include "nn/module.h"

namespace ts::nn {

class Conv2d final : public Module {
 public:
  // weight [out_channels, in_channels / groups, kernel[0], kernel[1]], bias
  // [out_channels] when `bias`. Sizes must be positive and both channel
  // counts divisible by options.groups.
  Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel,
         functional::Conv2dOptions options = {}, bool bias = true);
  // x [N, in_channels, H, W] -> [N, out_channels, H_out, W_out].
  Variable forward(const Variable& x);

  const functional::Conv2dOptions& options() const { return options_; }

 private:
  functional::Conv2dOptions options_;
};

}  // namespace ts::nn
