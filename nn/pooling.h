// Pooling layers over [N, C, H, W]: max, average and adaptive average (the
// ops in nn/functional.h). No parameters.
#pragma once

#include <array>
#include <cstdint>

#include "nn/functional.h"
#include "nn/module.h"

namespace ts::nn {

class MaxPool2d final : public Module {
 public:
  explicit MaxPool2d(functional::Pool2dOptions options) : Module("MaxPool2d"), options_(options) {}
  Variable forward(const Variable& x);

 private:
  functional::Pool2dOptions options_;
};

class AvgPool2d final : public Module {
 public:
  explicit AvgPool2d(functional::Pool2dOptions options) : Module("AvgPool2d"), options_(options) {}
  Variable forward(const Variable& x);

 private:
  functional::Pool2dOptions options_;
};

class AdaptiveAvgPool2d final : public Module {
 public:
  explicit AdaptiveAvgPool2d(std::array<int64_t, 2> output_size)
      : Module("AdaptiveAvgPool2d"), output_size_(output_size) {}
  Variable forward(const Variable& x);

 private:
  std::array<int64_t, 2> output_size_;
};

}  // namespace ts::nn
