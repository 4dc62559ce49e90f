// What a config's text chooses reaches the optimizer and the lr control:
// every SGD and Adam field (Adam on torch.optim's worked examples, SGD
// against torch's update written out), and each lr schedule's epoch-by-epoch
// lr. A field dropped or swapped on the way from the text proto changes the
// steps or the lrs here.
#include "tasks/common/optimizer_factory.h"

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tasks/common/config.h"
#include "tensor/ops.h"
#include "tests/optim/torch_adam_examples.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using autograd::Variable;
using ::ts::testing::expect_close;
using ::ts::testing::Ref;
using ::ts::testing::value_or_die;

// The worked examples' start and gradients, for SGD too.
const std::vector<std::vector<double>>& kGrads = optim::kTorchAdamGrads;
const std::vector<double>& kStart = optim::kTorchAdamStart;

TaskConfig config(const std::string& text) { return value_or_die(parse_config(text, "test config")); }

// The parameter after each of three steps of the optimizer `text` chooses.
std::vector<std::vector<double>> trajectory(const std::string& text) {
  const Variable p(from_vector<double>(kStart, {3}), true);
  const std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(config(text), {{"p", p}});
  std::vector<std::vector<double>> after;
  for (const std::vector<double>& g : kGrads) {
    p.set_grad(from_vector<double>(g, {3}));
    optimizer->step();
    after.push_back(to_vector<double>(p.data()));
  }
  return after;
}

void expect_trajectory(const std::string& text, const std::vector<std::vector<double>>& want) {
  SCOPED_TRACE(text);
  const std::vector<std::vector<double>> got = trajectory(text);
  for (size_t step = 0; step < want.size(); ++step) {
    expect_close(from_vector<double>(got[step], {3}), Ref{{3}, want[step]}, 1e-14, 1.0,
                 "after step " + std::to_string(step + 1));
  }
}

// Each of torch's worked examples, its options written as config text.
TEST(OptimizerFactoryTest, AdamFieldsReachTheOptimizer) {
  for (const optim::TorchAdamExample& example : optim::kTorchAdamExamples) {
    const optim::AdamOptions& o = example.options;
    expect_trajectory(absl::StrCat("adam { lr: ", o.lr, " beta1: ", o.beta1, " beta2: ", o.beta2, " eps: ", o.eps,
                                   " weight_decay: ", o.weight_decay, " amsgrad: ", o.amsgrad ? "true" : "false",
                                   " decoupled_weight_decay: ", o.decoupled_weight_decay ? "true" : "false", " }"),
                      example.after_step);
  }
}

// torch.optim.SGD's update (_single_tensor_sgd) in double.
std::vector<std::vector<double>> torch_sgd(double lr, double momentum, double dampening, double weight_decay,
                                           bool nesterov) {
  std::vector<double> p = kStart, buf;
  std::vector<std::vector<double>> after;
  for (const std::vector<double>& grad : kGrads) {
    std::vector<double> g = grad;
    for (size_t i = 0; i < p.size(); ++i) g[i] += weight_decay * p[i];
    if (momentum != 0) {
      if (buf.empty()) {
        buf = g;
      } else {
        for (size_t i = 0; i < p.size(); ++i) buf[i] = momentum * buf[i] + (1 - dampening) * g[i];
      }
      for (size_t i = 0; i < p.size(); ++i) g[i] = nesterov ? g[i] + momentum * buf[i] : buf[i];
    }
    for (size_t i = 0; i < p.size(); ++i) p[i] -= lr * g[i];
    after.push_back(p);
  }
  return after;
}

TEST(OptimizerFactoryTest, SgdFieldsReachTheOptimizer) {
  expect_trajectory("sgd { lr: 0.3 momentum: 0.9 dampening: 0.25 weight_decay: 0.01 }",
                    torch_sgd(0.3, 0.9, 0.25, 0.01, false));
  expect_trajectory("sgd { lr: 0.2 momentum: 0.8 nesterov: true }", torch_sgd(0.2, 0.8, 0, 0, true));
  // No optimizer in the config: SGD's defaults (lr 0.1, no momentum).
  expect_trajectory("name: \"defaults\"", torch_sgd(0.1, 0, 0, 0, false));
}

std::vector<double> lrs(const std::string& text, int epochs, const std::vector<double>& losses = {}) {
  optim::LrControl control(lr_control_options(config(text), /*world_size=*/1, optim::LrScaling::kLinear));
  std::vector<double> out;
  for (int e = 0; e < epochs; ++e) {
    out.push_back(control.lr(e));
    if (e < static_cast<int>(losses.size())) control.end_epoch(losses[e]);
  }
  return out;
}

void expect_lrs(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < want.size(); ++e) EXPECT_NEAR(got[e], want[e], 1e-15) << "epoch " << e;
}

TEST(OptimizerFactoryTest, EachLrScheduleShapesTheEpochs) {
  expect_lrs(lrs("sgd { lr: 0.1 }", 3), {0.1, 0.1, 0.1});
  expect_lrs(lrs("sgd { lr: 0.1 } lr_schedule: STEP lr_step_epochs: 2 lr_decay_factor: 0.5", 5),
             {0.1, 0.1, 0.05, 0.05, 0.025});
  expect_lrs(lrs("sgd { lr: 0.1 } lr_schedule: MULTISTEP lr_milestones: [1, 3] lr_decay_factor: 0.1", 4),
             {0.1, 0.01, 0.01, 0.001});
  std::vector<double> cosine;
  for (int e = 0; e < 4; ++e) cosine.push_back(0.01 + (0.1 - 0.01) * (1 + std::cos(std::numbers::pi * e / 4)) / 2);
  expect_lrs(lrs("sgd { lr: 0.1 } epochs: 4 lr_schedule: COSINE lr_min: 0.01", 4), cosine);
  // Plateau: patience 1, so the second evaluation in a row without a
  // relative improvement of 10% halves the lr, but never below lr_min.
  expect_lrs(lrs("adam { lr: 0.1 } lr_schedule: PLATEAU lr_patience: 1 lr_decay_factor: 0.5 "
                 "lr_plateau_threshold: 0.1 lr_min: 0.04",
                 7, {1.0, 0.95, 0.95, 0.5, 0.5, 0.5}),
             {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.04});
}

}  // namespace
}  // namespace ts::tasks
