#include "nn/conv2d.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "nn/init.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::nn {

absl::StatusOr<std::shared_ptr<Conv2d>> Conv2d::create(int64_t in_channels, int64_t out_channels,
                                                       std::array<int64_t, 2> kernel,
                                                       functional::Conv2dOptions options,
                                                       bool bias) {
  const int64_t groups = options.groups;
  if (in_channels <= 0 || out_channels <= 0 || kernel[0] <= 0 || kernel[1] <= 0 || groups <= 0 ||
      in_channels % groups != 0 || out_channels % groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Conv2d(in_channels=", in_channels, ", out_channels=", out_channels, ", kernel=[",
        kernel[0], ", ", kernel[1], "], groups=", groups,
        "): sizes must be positive and both channel counts divisible by groups"));
  }
  std::shared_ptr<Conv2d> m(new Conv2d(options));
  ASSIGN_OR_RETURN(Tensor weight, empty({out_channels, in_channels / groups, kernel[0], kernel[1]}));
  RETURN_IF_ERROR(init::kaiming_uniform_(weight, std::sqrt(5.0)));
  m->register_parameter("weight", weight);
  if (bias) {
    ASSIGN_OR_RETURN(init::Fans fans, init::compute_fans(weight));
    const double bound = 1.0 / std::sqrt(static_cast<double>(fans.fan_in));
    ASSIGN_OR_RETURN(Tensor b, uniform({out_channels}, -bound, bound));
    m->register_parameter("bias", b);
  }
  return m;
}

absl::StatusOr<Variable> Conv2d::forward(const Variable& x) {
  return functional::conv2d(x, param("weight"), has_param("bias") ? param("bias") : Variable(),
                            options_);
}

}  // namespace ts::nn
