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
#include "tensor/status_macros.h"
#include "tests/nn/module_gradcheck.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::random_tensor;
using ::ts::testing::ref_of;
using ::ts::testing::value_or_die;
using Vars = std::vector<Variable>;
using ::ts::nn::testing::gradcheck_module;

class LayersTest : public ts::testing::SeededTest {};

TEST_F(LayersTest, LinearMatchesReference) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Linear> lin, Linear::create(5, 3));
  const Tensor x = random_tensor(rng(), {2, 4, 5}, DType::kF32);
  ASSERT_OK_AND_ASSIGN(Variable y, lin->forward(Variable(x)));
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
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Linear> lin, Linear::create(4, 3));
  EXPECT_OK(gradcheck_module(*lin, random_tensor(rng(), {2, 4}, DType::kF64)));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Linear> no_bias, Linear::create(3, 2, false));
  EXPECT_OK(gradcheck_module(*no_bias, random_tensor(rng(), {2, 2, 3}, DType::kF64)));
}

TEST_F(LayersTest, LinearDefaultInitBounds) {
  manual_seed(seed());
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Linear> lin, Linear::create(400, 300));
  // kaiming_uniform_(a = sqrt(5)) and the bias both give U(-1/sqrt(400), 1/sqrt(400)).
  const double bound = 1.0 / 20.0;
  for (const auto& [name, p] : lin->named_parameters()) {
    const auto v = value_or_die(to_vector<double>(p.data()));
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
  expect_error(Linear::create(0, 3).status(), absl::StatusCode::kInvalidArgument,
               {"Linear", "in_features=0"});
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Linear> lin, Linear::create(4, 3));
  expect_error(lin->forward(Variable(value_or_die(zeros({2, 5})))).status(),
               absl::StatusCode::kInvalidArgument, {"Linear(in_features=4", "f32[2, 5]"});
}

TEST_F(LayersTest, ReLUAndFlatten) {
  const Tensor x = random_tensor(rng(), {2, 3, 2, 2}, DType::kF64);
  ReLU relu;
  ASSERT_OK_AND_ASSIGN(Variable r, relu.forward(Variable(x)));
  ts::testing::expect_close(r.data(), ts::testing::ref_map(ref_of(x), [](double v) { return v > 0 ? v : 0; }),
                            0);
  Flatten flatten;
  ASSERT_OK_AND_ASSIGN(Variable f, flatten.forward(Variable(x)));
  EXPECT_EQ(f.shape(), (Shape{2, 12}));
  Flatten middle(1, 2);
  ASSERT_OK_AND_ASSIGN(Variable m, middle.forward(Variable(x)));
  EXPECT_EQ(m.shape(), (Shape{2, 6, 2}));
  EXPECT_OK(autograd::gradcheck([&](const Vars& v) { return flatten.forward(v[0]); }, {x}));
}

TEST_F(LayersTest, DropoutScalesKeptElementsAndIsIdentityInEval) {
  manual_seed(seed());
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dropout> drop, Dropout::create(0.25));
  ASSERT_OK_AND_ASSIGN(Tensor x, ones({100000}));
  ASSERT_OK_AND_ASSIGN(Variable y, drop->forward(Variable(x, true)));
  const auto v = value_or_die(to_vector<float>(y.data()));
  int64_t kept = 0;
  for (float e : v) {
    ASSERT_TRUE(e == 0.0f || std::abs(e - 1 / 0.75f) < 1e-6f) << e;
    kept += e != 0;
  }
  // 75,000 expected; 5 standard deviations is ~685.
  EXPECT_NEAR(static_cast<double>(kept), 75000, 700);
  // The gradient is the same mask.
  Variable leaf(x, true);
  ASSERT_OK_AND_ASSIGN(Variable y2, drop->forward(leaf));
  ASSERT_OK_AND_ASSIGN(Variable s2, autograd::sum(y2));
  ASSERT_OK(s2.backward());
  ts::testing::expect_close(leaf.grad(), ref_of(y2.data()), 0);

  drop->eval();
  ASSERT_OK_AND_ASSIGN(Variable same, drop->forward(Variable(x)));
  EXPECT_TRUE(same.data().shares_storage_with(x));

  drop->train();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Dropout> all, Dropout::create(1.0));
  ASSERT_OK_AND_ASSIGN(Variable zero, all->forward(Variable(x)));
  ASSERT_OK_AND_ASSIGN(Tensor zsum, sum(zero.data()));
  EXPECT_EQ(value_or_die(item<double>(zsum)), 0.0);
  expect_error(Dropout::create(1.5).status(), absl::StatusCode::kInvalidArgument, {"Dropout(p=1.5)"});
}

}  // namespace
}  // namespace ts::nn
