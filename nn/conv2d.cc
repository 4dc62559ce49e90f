#include "nn/conv2d.h"

#include <cmath>

#include "base/error.h"
#include "nn/init.h"
#include "tensor/ops.h"

namespace ts::nn {

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel,
               functional::Conv2dOptions options, bool bias)
    : Module("Conv2d"), options_(options) {
  const int64_t groups = options.groups;
  TS_CHECK(in_channels > 0 && out_channels > 0 && kernel[0] > 0 && kernel[1] > 0 && groups > 0 &&
               in_channels % groups == 0 && out_channels % groups == 0,
           "Conv2d(in_channels=", in_channels, ", out_channels=", out_channels, ", kernel=[", kernel[0], ", ",
           kernel[1], "], groups=", groups, "): sizes must be positive and both channel counts divisible by groups");
  const Tensor weight = empty({out_channels, in_channels / groups, kernel[0], kernel[1]});
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  register_parameter("weight", weight);
  if (bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(init::compute_fans(weight).fan_in));
    register_parameter("bias", uniform({out_channels}, -bound, bound));
  }
}

Variable Conv2d::forward(const Variable& x) {
  return functional::conv2d(x, param("weight"), has_param("bias") ? param("bias") : Variable(), options_);
}

}  // namespace ts::nn
