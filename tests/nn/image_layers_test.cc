// Conv2d, Conv3d, BatchNorm2d and the pooling layers as modules: parameter shapes and
// default init, gradcheck through the module (input and parameters), batch
// norm's running statistics, counter and train/eval switch.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/pooling.h"
#include "tensor/ops.h"
#include "tests/nn/module_gradcheck.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;
using ::ts::testing::ref_of;
using Vars = std::vector<Variable>;
using ::ts::nn::testing::gradcheck_module;

class ImageLayersTest : public ts::testing::SeededTest {};

TEST_F(ImageLayersTest, Conv2dShapesInitAndGradcheck) {
  manual_seed(seed());
  functional::Conv2dOptions options;
  options.stride = {2, 1};
  options.padding = {1, 0};
  options.groups = 2;
  Conv2d conv(4, 6, {3, 2}, options);
  const auto params = conv.named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].second.shape(), (Shape{6, 2, 3, 2}));
  EXPECT_EQ(params[1].second.shape(), (Shape{6}));
  const double bound = 1 / std::sqrt(2.0 * 3 * 2);  // 1/sqrt(fan_in) for weight and bias
  for (const auto& [name, p] : params) {
    for (double v : to_vector<double>(p.data())) {
      EXPECT_LE(std::abs(v), bound) << name;
    }
  }
  const Tensor x = random_tensor(rng(), {2, 4, 5, 4}, DType::kF64);
  const Variable y = conv.forward(Variable(to(x, DType::kF32)));
  EXPECT_EQ(y.shape(), (Shape{2, 6, 3, 3}));
  EXPECT_OK(gradcheck_module(conv, x));

  const Conv2d no_bias(2, 3, {1, 1}, {}, false);
  EXPECT_EQ(no_bias.named_parameters().size(), 1u);
  expect_throws(absl::StatusCode::kInvalidArgument, {"Conv2d", "groups=3"}, [] {
    Conv2d(4, 6, {3, 3}, {{1, 1}, {0, 0}, {1, 1}, 3});
  });
}

TEST_F(ImageLayersTest, Conv3dShapesInitAndGradcheck) {
  manual_seed(seed());
  Conv3d conv(2, 4, {3, 3, 2}, {.stride = {2, 1, 1}, .padding = {1, 1, 0}, .groups = 2});
  const auto params = conv.named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].second.shape(), (Shape{4, 1, 3, 3, 2}));
  EXPECT_EQ(params[1].second.shape(), (Shape{4}));
  const double bound = 1 / std::sqrt(1.0 * 3 * 3 * 2);  // 1/sqrt(fan_in) for weight and bias
  for (const auto& [name, p] : params) {
    for (double v : to_vector<double>(p.data())) {
      EXPECT_LE(std::abs(v), bound) << name;
    }
  }
  const Tensor x = random_tensor(rng(), {1, 2, 4, 3, 3}, DType::kF64);
  const Variable y = conv.forward(Variable(to(x, DType::kF32)));
  EXPECT_EQ(y.shape(), (Shape{1, 4, 2, 3, 2}));
  EXPECT_OK(gradcheck_module(conv, x));
  expect_throws(absl::StatusCode::kInvalidArgument, {"Conv3d", "kernel=[3, 0, 3]"}, [] { Conv3d(2, 4, {3, 0, 3}); });
}

TEST_F(ImageLayersTest, Conv2dOneByOneIsAPerPixelLinearMap) {
  Conv2d conv(3, 2, {1, 1});
  conv.to(DType::kF64);
  const Tensor x = random_tensor(rng(), {2, 3, 2, 2}, DType::kF64);
  const Variable y = conv.forward(Variable(x));
  const auto w = ref_of(conv.named_parameters()[0].second.data());
  const auto b = ref_of(conv.named_parameters()[1].second.data());
  const auto xr = ref_of(x);
  ts::testing::Ref expected{{2, 2, 2, 2}, std::vector<double>(16)};
  for (int n = 0; n < 2; ++n) {
    for (int o = 0; o < 2; ++o) {
      for (int p = 0; p < 4; ++p) {
        double acc = b.v[o];
        for (int c = 0; c < 3; ++c) acc += w.v[o * 3 + c] * xr.v[(n * 3 + c) * 4 + p];
        expected.v[(n * 2 + o) * 4 + p] = acc;
      }
    }
  }
  ts::testing::expect_close(y.data(), expected, 1e-12);
}

TEST_F(ImageLayersTest, BatchNormTrainingUpdatesRunningStatsAndCounter) {
  BatchNorm2d bn(3);
  bn.to(DType::kF64);
  const NamedTensors state = bn.state_dict();
  ASSERT_EQ(state.size(), 5u);
  EXPECT_EQ(state[2].first, "running_mean");
  EXPECT_EQ(state[4].first, "num_batches_tracked");
  EXPECT_EQ(state[4].second.dtype(), DType::kI64);
  EXPECT_EQ(state[4].second.dim(), 0);

  const Tensor x = random_tensor(rng(), {4, 3, 2, 3}, DType::kF64, -2, 3);
  bn.forward(Variable(x));
  const Variable y = bn.forward(Variable(x));
  EXPECT_EQ(item<int64_t>(bn.named_buffers()[2].second), 2);

  // Per channel: batch mean and biased variance normalize; the running stats
  // move 10% of the way to the mean and the unbiased variance, twice.
  const auto xr = ref_of(x);
  const auto yr = ref_of(y.data());
  const auto running_mean = to_vector<double>(bn.named_buffers()[0].second);
  const auto running_var = to_vector<double>(bn.named_buffers()[1].second);
  const int per_channel = 4 * 6;
  for (int c = 0; c < 3; ++c) {
    std::vector<int64_t> idx;
    for (int n = 0; n < 4; ++n) {
      for (int p = 0; p < 6; ++p) idx.push_back((n * 3 + c) * 6 + p);
    }
    double mean = 0, var = 0;
    for (int64_t i : idx) mean += xr.v[i];
    mean /= per_channel;
    for (int64_t i : idx) var += (xr.v[i] - mean) * (xr.v[i] - mean);
    const double biased = var / per_channel, unbiased = var / (per_channel - 1);
    for (int64_t i : idx) {
      EXPECT_NEAR(yr.v[i], (xr.v[i] - mean) / std::sqrt(biased + 1e-5), 1e-10);
    }
    EXPECT_NEAR(running_mean[c], mean * (1 - 0.9 * 0.9), 1e-12);
    EXPECT_NEAR(running_var[c], 0.81 + unbiased * (1 - 0.81), 1e-12);
  }

  // Eval: normalize with the running statistics; the counter stays.
  bn.eval();
  const Variable e = bn.forward(Variable(x));
  const auto er = ref_of(e.data());
  for (int c = 0; c < 3; ++c) {
    const int64_t i = (1 * 3 + c) * 6 + 4;
    EXPECT_NEAR(er.v[i], (xr.v[i] - running_mean[c]) / std::sqrt(running_var[c] + 1e-5), 1e-10);
  }
  EXPECT_EQ(item<int64_t>(bn.named_buffers()[2].second), 2);
}

TEST_F(ImageLayersTest, BatchNormGradcheckInBothModes) {
  BatchNorm2d bn(2);
  const Tensor x = random_tensor(rng(), {3, 2, 2, 2}, DType::kF64);
  EXPECT_OK(gradcheck_module(bn, x));
  bn.eval();
  EXPECT_OK(gradcheck_module(bn, x));
  expect_throws(absl::StatusCode::kInvalidArgument, {"BatchNorm2d(2)", "f64[2, 3, 2, 2]"}, [&] {
    bn.forward(Variable(zeros({2, 3, 2, 2}, {DType::kF64})));
  });
}

// forward_relu is relu(forward(x) + residual): the same values and running
// statistics as the ops written out, and it counts the batch too.
TEST_F(ImageLayersTest, BatchNormForwardReluIsReluOfBatchNormPlusResidual) {
  const Tensor x = random_tensor(rng(), {4, 3, 2, 3}, DType::kF64, -2, 3);
  const Tensor residual = random_tensor(rng(), {4, 3, 2, 3}, DType::kF64, -1, 1);
  for (const bool with_residual : {false, true}) {
    SCOPED_TRACE(with_residual ? "with a residual" : "without");
    BatchNorm2d fused(3), written_out(3);
    fused.to(DType::kF64);
    written_out.to(DType::kF64);
    for (const bool training : {true, false}) {
      fused.train(training);
      written_out.train(training);
      const Variable r = with_residual ? Variable(residual) : Variable();
      const Variable y = fused.forward_relu(Variable(x), r);
      const Variable normalized = written_out.forward(Variable(x));
      const Variable expected = autograd::relu(with_residual ? normalized + r : normalized);
      EXPECT_EQ(to_vector<double>(y.data()), to_vector<double>(expected.data()));
    }
    for (size_t b = 0; b < 3; ++b) {
      EXPECT_EQ(to_vector<double>(to(fused.named_buffers()[b].second, DType::kF64)),
                to_vector<double>(to(written_out.named_buffers()[b].second, DType::kF64)))
          << fused.named_buffers()[b].first;
    }
    EXPECT_EQ(item<int64_t>(fused.named_buffers()[2].second), 1);
  }
  BatchNorm2d bn(3);
  expect_throws(absl::StatusCode::kInvalidArgument, {"batch_norm_relu", "z f32[4, 3, 2, 2]"}, [&] {
    bn.forward_relu(Variable(zeros({4, 3, 2, 3})), Variable(zeros({4, 3, 2, 2})));
  });
}

TEST_F(ImageLayersTest, Pooling) {
  const Tensor x = reshape(arange(0, 16, 1, {DType::kF64}), {1, 1, 4, 4});
  MaxPool2d max_pool({{2, 2}, {2, 2}});
  const Variable m = max_pool.forward(Variable(x));
  EXPECT_EQ(to_vector<double>(m.data()), (std::vector<double>{5, 7, 13, 15}));
  AvgPool2d avg_pool({{2, 2}, {2, 2}});
  const Variable a = avg_pool.forward(Variable(x));
  EXPECT_EQ(to_vector<double>(a.data()), (std::vector<double>{2.5, 4.5, 10.5, 12.5}));
  AdaptiveAvgPool2d global({1, 1});
  const Variable g = global.forward(Variable(x));
  EXPECT_EQ(g.shape(), (Shape{1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(item<double>(g.data()), 7.5);
  const Tensor r = random_tensor(rng(), {2, 2, 5, 5}, DType::kF64);
  MaxPool2d overlapping({{3, 3}, {2, 2}, {1, 1}});
  const std::vector<std::pair<std::string, autograd::GradcheckFn>> pools = {
      {overlapping.type_name(), [&](const Vars& v) { return overlapping.forward(v[0]); }},
      {avg_pool.type_name(), [&](const Vars& v) { return avg_pool.forward(v[0]); }},
      {global.type_name(), [&](const Vars& v) { return global.forward(v[0]); }},
  };
  for (const auto& [name, forward] : pools) {
    SCOPED_TRACE(name);
    EXPECT_OK(autograd::gradcheck(forward, {r}));
  }
  EXPECT_TRUE(overlapping.named_parameters().empty());
}

}  // namespace
}  // namespace ts::nn
