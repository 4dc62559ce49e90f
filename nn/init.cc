#include "nn/init.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::nn::init {
namespace {

absl::Status check_floating(const Tensor& t, absl::string_view op) {
  if (!t.defined() || !is_floating(t.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "init::", op, ": needs a floating-point tensor, got ",
        t.defined() ? t.describe() : "an undefined tensor"));
  }
  return absl::OkStatus();
}

// Draws in the tensor's own dtype and device, then writes through copy_ so
// strided views work too.
template <typename Draw>
absl::Status fill_from(const Tensor& t, absl::string_view op, Draw draw) {
  RETURN_IF_ERROR(check_floating(t, op));
  ASSIGN_OR_RETURN(Tensor values, draw(TensorOptions{t.dtype(), t.device()}));
  return copy_(t, values);
}

absl::StatusOr<double> kaiming_std(const Tensor& t, absl::string_view op, double a, FanMode mode,
                                   Nonlinearity nonlinearity) {
  ASSIGN_OR_RETURN(Fans fans, compute_fans(t));
  const int64_t fan = mode == FanMode::kFanIn ? fans.fan_in : fans.fan_out;
  if (fan == 0) {
    return absl::InvalidArgumentError(absl::StrCat("init::", op, ": ", t.describe(), " has zero fan"));
  }
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}

absl::StatusOr<double> xavier_std(const Tensor& t, double gain) {
  ASSIGN_OR_RETURN(Fans fans, compute_fans(t));
  return gain * std::sqrt(2.0 / static_cast<double>(fans.fan_in + fans.fan_out));
}

}  // namespace

absl::StatusOr<Fans> compute_fans(const Tensor& t) {
  if (!t.defined() || t.dim() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "init: fan in and fan out need a tensor of rank >= 2, got ",
        t.defined() ? t.describe() : "an undefined tensor"));
  }
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

absl::Status constant_(const Tensor& t, const Scalar& value) {
  RETURN_IF_ERROR(check_floating(t, "constant_"));
  return fill_(t, value);
}

absl::Status uniform_(const Tensor& t, double low, double high, Generator* generator) {
  return fill_from(t, "uniform_", [&](TensorOptions o) {
    return uniform(t.shape(), low, high, o, generator);
  });
}

absl::Status normal_(const Tensor& t, double mean, double stddev, Generator* generator) {
  return fill_from(t, "normal_", [&](TensorOptions o) {
    return normal(t.shape(), mean, stddev, o, generator);
  });
}

absl::Status kaiming_uniform_(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity,
                              Generator* generator) {
  ASSIGN_OR_RETURN(double stddev, kaiming_std(t, "kaiming_uniform_", a, mode, nonlinearity));
  const double bound = std::sqrt(3.0) * stddev;
  return uniform_(t, -bound, bound, generator);
}

absl::Status kaiming_normal_(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity,
                             Generator* generator) {
  ASSIGN_OR_RETURN(double stddev, kaiming_std(t, "kaiming_normal_", a, mode, nonlinearity));
  return normal_(t, 0, stddev, generator);
}

absl::Status xavier_uniform_(const Tensor& t, double gain, Generator* generator) {
  ASSIGN_OR_RETURN(double stddev, xavier_std(t, gain));
  const double bound = std::sqrt(3.0) * stddev;
  return uniform_(t, -bound, bound, generator);
}

absl::Status xavier_normal_(const Tensor& t, double gain, Generator* generator) {
  ASSIGN_OR_RETURN(double stddev, xavier_std(t, gain));
  return normal_(t, 0, stddev, generator);
}

}  // namespace ts::nn::init
