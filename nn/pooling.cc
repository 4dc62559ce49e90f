#include "nn/pooling.h"

namespace ts::nn {

Variable MaxPool2d::forward(const Variable& x) { return functional::max_pool2d(x, options_); }

Variable AvgPool2d::forward(const Variable& x) { return functional::avg_pool2d(x, options_); }

Variable AdaptiveAvgPool2d::forward(const Variable& x) { return functional::adaptive_avg_pool2d(x, output_size_); }

}  // namespace ts::nn
