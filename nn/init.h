// Parameter initialization, as torch.nn.init: each fills a tensor in place
// (any device, floating dtype) from the default generator unless one is given.
// A tensor they cannot fill (integer, undefined, no fans) is an Error.
#pragma once

#include <cstdint>

#include "tensor/random.h"
#include "tensor/scalar.h"
#include "tensor/tensor.h"

namespace ts::nn::init {

enum class FanMode { kFanIn, kFanOut };
enum class Nonlinearity { kLinear, kSigmoid, kTanh, kRelu, kLeakyRelu };

struct Fans {
  int64_t fan_in = 0;
  int64_t fan_out = 0;
};
// fan_in = shape[1] * receptive field, fan_out = shape[0] * receptive field
// (receptive field: the product of dims 2...); tensors of rank < 2 have none.
Fans compute_fans(const Tensor& t);

// PyTorch's recommended gains; `param` is leaky_relu's negative slope.
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);

void constant_(const Tensor& t, const Scalar& value);
void uniform_(const Tensor& t, double low, double high, Generator* generator = nullptr);
void normal_(const Tensor& t, double mean, double stddev, Generator* generator = nullptr);

// He et al. 2015: std = gain / sqrt(fan), uniform bound sqrt(3) * std.
// Linear and Conv2d default to kaiming_uniform_(a = sqrt(5)), ResNets use
// kaiming_normal_(fan_out, relu) for convolutions.
void kaiming_uniform_(const Tensor& t, double a = 0, FanMode mode = FanMode::kFanIn,
                      Nonlinearity nonlinearity = Nonlinearity::kLeakyRelu, Generator* generator = nullptr);
void kaiming_normal_(const Tensor& t, double a = 0, FanMode mode = FanMode::kFanIn,
                     Nonlinearity nonlinearity = Nonlinearity::kLeakyRelu, Generator* generator = nullptr);

// Glorot and Bengio 2010: std = gain * sqrt(2 / (fan_in + fan_out)).
void xavier_uniform_(const Tensor& t, double gain = 1, Generator* generator = nullptr);
void xavier_normal_(const Tensor& t, double gain = 1, Generator* generator = nullptr);

}  // namespace ts::nn::init
