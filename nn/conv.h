// Conv2d and Conv3d: convolution over [N, C, H, W] or [N, C, D, H, W]
// (nn/functional.h's conv2d/conv3d: groups, stride, padding, dilation), with
// PyTorch's default initialization (weight kaiming_uniform_(a = sqrt(5)),
// bias uniform in +-1/sqrt(fan_in)).
#pragma once

#include <array>
#include <cstdint>

#include "nn/functional.h"
#include "nn/module.h"

namespace ts::nn {

// A convolution over N spatial dims (2 or 3).
template <int N>
class Conv final : public Module {
 public:
  // weight [out_channels, in_channels / groups, kernel...], bias
  // [out_channels] when `bias`. Sizes must be positive and both channel
  // counts divisible by options.groups.
  Conv(int64_t in_channels, int64_t out_channels, std::array<int64_t, N> kernel,
       functional::ConvOptions<N> options = {}, bool bias = true);
  // x [N, in_channels, spatial...] -> [N, out_channels, spatial out...].
  Variable forward(const Variable& x);

  const functional::ConvOptions<N>& options() const { return options_; }

 private:
  functional::ConvOptions<N> options_;
};

using Conv2d = Conv<2>;
using Conv3d = Conv<3>;

extern template class Conv<2>;
extern template class Conv<3>;

}  // namespace ts::nn
