#include "nn/conv.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "nn/init.h"
#include "tensor/ops.h"

namespace ts::nn {

template <int N>
Conv<N>::Conv(int64_t in_channels, int64_t out_channels, std::array<int64_t, N> kernel,
              functional::ConvOptions<N> options, bool bias)
    : Module(absl::StrCat("Conv", N, "d")), options_(options) {
  const int64_t groups = options.groups;
  bool positive = in_channels > 0 && out_channels > 0 && groups > 0;
  for (int64_t k : kernel) positive = positive && k > 0;
  TS_CHECK(positive && in_channels % groups == 0 && out_channels % groups == 0, "Conv", N,
           "d(in_channels=", in_channels, ", out_channels=", out_channels, ", kernel=[", absl::StrJoin(kernel, ", "),
           "], groups=", groups, "): sizes must be positive and both channel counts divisible by groups");
  Shape shape = {out_channels, in_channels / groups};
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  const Tensor weight = ts::empty(shape);
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  register_parameter("weight", weight);
  if (bias) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(init::compute_fans(weight).fan_in));
    register_parameter("bias", uniform({out_channels}, -bound, bound));
  }
}

template <int N>
Variable Conv<N>::forward(const Variable& x) {
  const Variable bias = has_param("bias") ? param("bias") : Variable();
  if constexpr (N == 2) {
    return functional::conv2d(x, param("weight"), bias, options_);
  } else {
    return functional::conv3d(x, param("weight"), bias, options_);
  }
}

template class Conv<2>;
template class Conv<3>;

}  // namespace ts::nn
