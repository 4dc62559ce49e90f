// Linear, ReLU, Dropout, Flatten: forward against float64 references,
// gradcheck through the module (input and parameters), PyTorch's default
// initialization bounds, and input errors.
#include <cmath>
#include <memory>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/relu.h"
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

class LayersTest : public ts::testing::SeededTest {};

TEST_F(LayersTest, LinearMatchesReference) {
  auto lin = std::make_shared<Linear>(5, 3);
  const Tensor x = random_tensor(rng(), {2, 4, 5}, DType::kF32);
  const Variable y = lin->forward(Variable(x));
  ASSERT_EQ(y.shape(), (Shape{2, 4, 3}));
  const auto params = lin->named_parameters();
  const auto w = ref_of(params[0].second.data()), b = ref_of(params[1].second.data());
  const auto xr = ref_of(x);
  ts::testing::Ref expected{{2, 4, 3}, std::vector<double>(24)};
  for (int r = 0; r < 8; ++r) {
    for (int o = 0; o < 3; ++o) {
      double acc = b.v[o];
      for (int i = 0; i < 5; ++i) acc += xr.v[r * 5 + i] * w.v[o * 5 + i];
      expected.v[r * 3 + o] = acc;
    }
  }
  // Outputs are sums of O(1) products: one that cancels to near zero keeps the
  // summands' absolute rounding error, so the floor is their magnitude (with
  // 1e-3, a 3e-5 output off by 1e-8 failed: TS_TEST_SEED=17059262333568198299).
  ts::testing::expect_close(y.data(), expected, ts::testing::tolerance(DType::kF32), /*floor=*/1.0);
}

TEST_F(LayersTest, LinearGradcheck) {
  auto lin = std::make_shared<Linear>(4, 3);
  EXPECT_OK(gradcheck_module(*lin, random_tensor(rng(), {2, 4}, DType::kF64)));
  auto no_bias = std::make_shared<Linear>(3, 2, /*bias=*/false);
  EXPECT_OK(gradcheck_module(*no_bias, random_tensor(rng(), {2, 2, 3}, DType::kF64)));
}

TEST_F(LayersTest, LinearDefaultInitBounds) {
  manual_seed(seed());
  auto lin = std::make_shared<Linear>(400, 300);
  // kaiming_uniform_(a = sqrt(5)) and the bias both give U(-1/sqrt(400), 1/sqrt(400)).
  const double bound = 1.0 / 20.0;
  for (const auto& [name, p] : lin->named_parameters()) {
    const auto v = to_vector<double>(p.data());
    double lo = 1, hi = -1, sum_sq = 0;
    for (double e : v) {
      lo = std::min(lo, e);
      hi = std::max(hi, e);
      sum_sq += e * e;
    }
    // Values are f32: a draw at the bound rounds to within one f32 ulp of it
    // (-0.05 became -0.0500000007 in 3 seeds of 100, e.g.
    // TS_TEST_SEED=1811494123517310532).
    const double ulp = 1.2e-7;
    EXPECT_GE(lo, -bound * (1 + ulp)) << name;
    EXPECT_LE(hi, bound * (1 + ulp)) << name;
    EXPECT_LT(lo, -0.9 * bound) << name;  // the whole range is used
    EXPECT_GT(hi, 0.9 * bound) << name;
    if (name == "weight") {  // variance of U(-b, b) is b^2 / 3
      EXPECT_NEAR(sum_sq / v.size(), bound * bound / 3, 0.05 * bound * bound / 3);
    }
  }
}

TEST_F(LayersTest, LinearErrors) {
  expect_throws(absl::StatusCode::kInvalidArgument, {"Linear", "in_features=0"}, [] { Linear(0, 3); });
  Linear lin(4, 3);
  expect_throws(absl::StatusCode::kInvalidArgument, {"Linear(in_features=4", "f32[2, 5]"}, [&] {
    lin.forward(Variable(zeros({2, 5})));
  });
}

TEST_F(LayersTest, ReLUAndFlatten) {
  const Tensor x = random_tensor(rng(), {2, 3, 2, 2}, DType::kF64);
  ReLU relu;
  ts::testing::expect_close(relu.forward(Variable(x)).data(),
                            ts::testing::ref_map(ref_of(x), [](double v) { return v > 0 ? v : 0; }), 0);
  Flatten flatten;
  EXPECT_EQ(flatten.forward(Variable(x)).shape(), (Shape{2, 12}));
  Flatten middle(1, 2);
  EXPECT_EQ(middle.forward(Variable(x)).shape(), (Shape{2, 6, 2}));
  EXPECT_OK(autograd::gradcheck([&](const Vars& v) { return flatten.forward(v[0]); }, {x}));
}

TEST_F(LayersTest, DropoutScalesKeptElementsAndIsIdentityInEval) {
  manual_seed(seed());
  auto drop = std::make_shared<Dropout>(0.25);
  const Tensor x = ones({100000});
  const auto v = to_vector<float>(drop->forward(Variable(x, true)).data());
  int64_t kept = 0;
  for (float e : v) {
    ASSERT_TRUE(e == 0.0f || std::abs(e - 1 / 0.75f) < 1e-6f) << e;
    kept += e != 0;
  }
  // 75,000 expected; 5 standard deviations is ~685.
  EXPECT_NEAR(static_cast<double>(kept), 75000, 700);
  // The gradient is the same mask.
  Variable leaf(x, true);
  const Variable y2 = drop->forward(leaf);
  autograd::sum(y2).backward();
  ts::testing::expect_close(leaf.grad(), ref_of(y2.data()), 0);

  drop->eval();
  EXPECT_TRUE(drop->forward(Variable(x)).data().shares_storage_with(x));

  drop->train();
  Dropout all(1.0);
  EXPECT_EQ(item<double>(sum(all.forward(Variable(x)).data())), 0.0);
  expect_throws(absl::StatusCode::kInvalidArgument, {"Dropout(p=1.5)"}, [] { Dropout(1.5); });
}

}  // namespace
}  // namespace ts::nn
