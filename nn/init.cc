#include "nn/init.h"

#include <cmath>

#include "absl/strings/string_view.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::nn::init {
namespace {

void check_floating(const Tensor& t, absl::string_view op) {
  TS_CHECK(t.defined() && is_floating(t.dtype()), "init::", op, ": needs a floating-point tensor, got ", t.describe());
}

// Draws in the tensor's own dtype and device, then writes through copy_ so
// strided views work too.
template <typename Draw>
void fill_from(const Tensor& t, absl::string_view op, Draw draw) {
  check_floating(t, op);
  copy_(t, draw(TensorOptions{t.dtype(), t.device()}));
}

double kaiming_std(const Tensor& t, absl::string_view op, double a, FanMode mode, Nonlinearity nonlinearity) {
  const Fans fans = compute_fans(t);
  const int64_t fan = mode == FanMode::kFanIn ? fans.fan_in : fans.fan_out;
  TS_CHECK(fan != 0, "init::", op, ": ", t.describe(), " has zero fan");
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}

double xavier_std(const Tensor& t, double gain) {
  const Fans fans = compute_fans(t);
  return gain * std::sqrt(2.0 / static_cast<double>(fans.fan_in + fans.fan_out));
}

}  // namespace

Fans compute_fans(const Tensor& t) {
  TS_CHECK(t.defined() && t.dim() >= 2, "init: fan in and fan out need a tensor of rank >= 2, got ", t.describe());
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return Fans{t.size(1) * receptive, t.size(0) * receptive};
}

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::kLinear:
    case Nonlinearity::kSigmoid:
      return 1.0;
    case Nonlinearity::kTanh:
      return 5.0 / 3.0;
    case Nonlinearity::kRelu:
      return std::sqrt(2.0);
    case Nonlinearity::kLeakyRelu:
      return std::sqrt(2.0 / (1.0 + param * param));
  }
  return 1.0;
}

void constant_(const Tensor& t, const Scalar& value) {
  check_floating(t, "constant_");
  fill_(t, value);
}

void uniform_(const Tensor& t, double low, double high, Generator* generator) {
  fill_from(t, "uniform_", [&](TensorOptions o) { return uniform(t.shape(), low, high, o, generator); });
}

void normal_(const Tensor& t, double mean, double stddev, Generator* generator) {
  fill_from(t, "normal_", [&](TensorOptions o) { return normal(t.shape(), mean, stddev, o, generator); });
}

void kaiming_uniform_(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity, Generator* generator) {
  const double bound = std::sqrt(3.0) * kaiming_std(t, "kaiming_uniform_", a, mode, nonlinearity);
  uniform_(t, -bound, bound, generator);
}

void kaiming_normal_(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity, Generator* generator) {
  normal_(t, 0, kaiming_std(t, "kaiming_normal_", a, mode, nonlinearity), generator);
}

void xavier_uniform_(const Tensor& t, double gain, Generator* generator) {
  const double bound = std::sqrt(3.0) * xavier_std(t, gain);
  uniform_(t, -bound, bound, generator);
}

void xavier_normal_(const Tensor& t, double gain, Generator* generator) {
  normal_(t, 0, xavier_std(t, gain), generator);
}

}  // namespace ts::nn::init
