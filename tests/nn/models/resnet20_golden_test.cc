// ResNet-20 against PyTorch: tools/golden/resnet20_torch.py wrote the
// fixture (initial state, a batch of 8, the logits, loss and every
// parameter's gradient of the first step, and the losses of 10 SGD steps)
// from the same architecture in PyTorch 2.15 on CPU. Same initial state and
// data here must give the same numbers within f32 tolerances: the two
// frameworks sum in different orders, so results agree to ~1e-6 relative
// per op and drift slowly over steps.
#include <map>
#include <string>

#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "nn/checkpoint.h"
#include "nn/losses.h"
#include "nn/models/resnet_cifar.h"
#include "optim/sgd.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using autograd::Variable;
using ::ts::testing::value_or_die;

constexpr char kFixture[] = "tests/nn/models/testdata/resnet20_golden.tsckpt";

class ResNet20GoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& [name, t] : value_or_die(load_tensors(kFixture))) fixture_[name] = t;
    model_ = value_or_die(models::resnet20());
    NamedTensors init;
    for (const auto& [name, t] : model_->state_dict()) init.emplace_back(name, fixture_.at("init." + name));
    ASSERT_OK(model_->load_state_dict(init));
  }

  Variable loss_of_batch(DType dtype = DType::kF32) {
    const Tensor input = value_or_die(to(fixture_.at("input"), dtype));
    Variable logits = value_or_die(model_->forward(Variable(input)));
    return value_or_die(cross_entropy(logits, fixture_.at("target")));
  }

  // The fixture's recipe (resnet20_torch.py): lr 0.02, Nesterov momentum
  // 0.9, weight decay 1e-4, the same batch every step. Returns the losses.
  std::vector<double> ten_sgd_steps(DType dtype) {
    EXPECT_OK(model_->to(dtype));
    optim::SgdOptions options;
    options.lr = 0.02;
    options.momentum = 0.9;
    options.nesterov = true;
    options.weight_decay = 1e-4;
    optim::Sgd sgd = value_or_die(optim::Sgd::create(model_->named_parameters(), options));
    std::vector<double> losses;
    for (int step = 0; step < 10; ++step) {
      sgd.zero_grad();
      Variable loss = loss_of_batch(dtype);
      losses.push_back(value_or_die(item<double>(value_or_die(to(loss.data(), DType::kF64)))));
      EXPECT_OK(loss.backward());
      EXPECT_OK(sgd.step());
    }
    return losses;
  }

  std::map<std::string, Tensor> fixture_;
  std::shared_ptr<Module> model_;
};

// |actual - expected| <= rtol * max|expected| elementwise: a tolerance on
// the scale of the whole tensor, since gradients mix values of very
// different sizes and small entries carry cancellation error.
void expect_close_to_scale(const Tensor& actual, const Tensor& expected, double rtol,
                           const std::string& what) {
  const std::vector<float> a = value_or_die(to_vector<float>(actual));
  const std::vector<float> e = value_or_die(to_vector<float>(expected));
  ASSERT_EQ(a.size(), e.size()) << what;
  double scale = 0;
  for (float v : e) scale = std::max(scale, static_cast<double>(std::abs(v)));
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], e[i], rtol * scale) << what << " element " << i << " (scale " << scale << ")";
  }
}

TEST_F(ResNet20GoldenTest, ForwardMatchesPyTorch) {
  Variable logits = value_or_die(model_->forward(Variable(fixture_.at("input"))));
  expect_close_to_scale(logits.data(), fixture_.at("logits"), 1e-5, "logits");
  Variable loss = value_or_die(cross_entropy(logits, fixture_.at("target")));
  EXPECT_NEAR(value_or_die(item<float>(loss.data())), value_or_die(item<float>(fixture_.at("loss"))),
              1e-5);
}

TEST_F(ResNet20GoldenTest, EveryGradientMatchesPyTorch) {
  ASSERT_OK(loss_of_batch().backward());
  int checked = 0;
  for (const auto& [name, param] : model_->named_parameters()) {
    ASSERT_TRUE(param.grad().defined()) << name;
    expect_close_to_scale(param.grad(), fixture_.at("grad." + name), 1e-4, name);
    ++checked;
  }
  // 21 conv weights, 21 batch norms (weight, bias), the classifier's weight and bias.
  EXPECT_EQ(checked, 65);
}

TEST_F(ResNet20GoldenTest, TenSgdStepsInFloat64MatchPyTorchExactly) {
  // In f64 rounding differences stay near 1e-15 per op: agreement to 1e-9
  // over 10 updates means the forward, backward and update math is PyTorch's.
  const std::vector<double> expected = value_or_die(to_vector<double>(fixture_.at("losses_f64")));
  const std::vector<double> losses = ten_sgd_steps(DType::kF64);
  ASSERT_EQ(losses.size(), expected.size());
  for (size_t step = 0; step < losses.size(); ++step) {
    EXPECT_NEAR(losses[step], expected[step], 1e-9 * std::abs(expected[step])) << "step " << step;
  }
}

TEST_F(ResNet20GoldenTest, TenSgdStepsInFloat32StayCloseToPyTorch) {
  // f32 summation orders differ (~1e-6 per op) and the updates amplify the
  // differences step by step: measured up to 2.3e-3 relative by step 10.
  const std::vector<float> expected = value_or_die(to_vector<float>(fixture_.at("losses")));
  const std::vector<double> losses = ten_sgd_steps(DType::kF32);
  ASSERT_EQ(losses.size(), expected.size());
  for (size_t step = 0; step < losses.size(); ++step) {
    const double rtol = step < 5 ? 1e-3 : 5e-3;
    EXPECT_NEAR(losses[step], expected[step], rtol * std::abs(expected[step])) << "step " << step;
  }
}

}  // namespace
}  // namespace ts::nn
