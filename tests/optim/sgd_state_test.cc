// SGD's state for an exact resume: a run saved mid-way and continued by a
// fresh optimizer matches the uninterrupted run bit for bit; loading checks
// every entry and names the one at fault.
#include <map>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "optim/sgd.h"
#include "tests/tensor/testing.h"

namespace ts::optim {
namespace {

using autograd::Variable;
using ::ts::testing::expect_error;
using ::ts::testing::random_tensor;

const std::vector<Shape> kShapes = {{4, 3}, {7}, {2, 2, 2}};
const SgdOptions kOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-3, .nesterov = true};

std::vector<float> floats(const Tensor& t) { return to_vector<float>(t); }

// What a checkpoint file does to a tensor: host bytes out, a new tensor in.
Tensor round_trip(const Tensor& t) {
  if (t.dtype() == DType::kI64) {
    return from_vector<int64_t>(to_vector<int64_t>(t), t.shape());
  }
  if (t.dtype() == DType::kF64) return from_vector<double>(to_vector<double>(t), t.shape());
  return from_vector<float>(floats(t), t.shape());
}

class SgdStateTest : public ::ts::testing::SeededTest {
 protected:
  void SetUp() override {
    for (const Shape& shape : kShapes) {
      initial_.push_back(random_tensor(rng(), shape, DType::kF32));
      for (int step = 0; step < 6; ++step) grads_.push_back(random_tensor(rng(), shape, DType::kF32));
    }
  }

  std::vector<std::pair<std::string, Variable>> fresh_params(const std::vector<Tensor>& values) const {
    std::vector<std::pair<std::string, Variable>> out;
    for (size_t i = 0; i < values.size(); ++i) {
      out.emplace_back("layer" + std::to_string(i) + ".weight", Variable(clone(values[i]), true));
    }
    return out;
  }

  // Steps [from, to) with this test's gradients; parameter 1 gets no gradient
  // on step 0, so its buffer and step count lag the others'.
  void run(Sgd& sgd, const std::vector<std::pair<std::string, Variable>>& params, int from, int to) const {
    for (int step = from; step < to; ++step) {
      for (size_t i = 0; i < params.size(); ++i) {
        if (i == 1 && step == 0) continue;
        params[i].second.set_grad(grads_[i * 6 + step]);
      }
      sgd.step();
      sgd.zero_grad();
    }
  }

  std::vector<Tensor> initial_;
  std::vector<Tensor> grads_;  // 6 steps per parameter
};

TEST_F(SgdStateTest, ResumedRunMatchesTheUninterruptedOneBitForBit) {
  auto straight = fresh_params(initial_);
  Sgd straight_sgd(straight, kOptions);
  run(straight_sgd, straight, 0, 6);

  auto first_half = fresh_params(initial_);
  Sgd first_sgd(first_half, kOptions);
  run(first_sgd, first_half, 0, 3);
  NamedTensors saved = first_sgd.state();
  std::vector<Tensor> saved_params;
  for (auto& [name, p] : first_half) saved_params.push_back(round_trip(p.data()));
  for (auto& [name, tensor] : saved) tensor = round_trip(tensor);
  run(first_sgd, first_half, 3, 4);  // the saved state must not follow the live run

  auto resumed = fresh_params(saved_params);
  SgdOptions other_lr = kOptions;
  other_lr.lr = 0.5;
  Sgd resumed_sgd(resumed, other_lr);
  ASSERT_OK(resumed_sgd.load_state(saved));
  EXPECT_EQ(resumed_sgd.lr(0), 0.1);  // the saved lr wins over the new optimizer's
  run(resumed_sgd, resumed, 3, 6);

  for (size_t i = 0; i < kShapes.size(); ++i) {
    EXPECT_EQ(floats(resumed[i].second.data()), floats(straight[i].second.data())) << "parameter " << i;
  }
  const NamedTensors a = straight_sgd.state();
  const NamedTensors b = resumed_sgd.state();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(to_vector<double>(a[i].second), to_vector<double>(b[i].second)) << a[i].first;
  }
}

TEST_F(SgdStateTest, StateNamesEveryEntry) {
  auto params = fresh_params(initial_);
  Sgd sgd(params, kOptions);
  run(sgd, params, 0, 1);  // parameter 1 has no gradient on step 0
  const NamedTensors state = sgd.state();
  std::map<std::string, Tensor> by_name(state.begin(), state.end());
  EXPECT_EQ(by_name.size(), 6u);
  EXPECT_EQ(item<double>(by_name.at("param_groups.0.lr")), 0.1);
  EXPECT_EQ(item<int64_t>(by_name.at("state.layer0.weight.step")), 1);
  EXPECT_EQ(item<int64_t>(by_name.at("state.layer1.weight.step")), 0);
  EXPECT_EQ(by_name.count("state.layer1.weight.momentum_buffer"), 0u);
  EXPECT_EQ(by_name.at("state.layer2.weight.momentum_buffer").shape(), (Shape{2, 2, 2}));
  // Without momentum there are no buffers.
  auto plain_params = fresh_params(initial_);
  Sgd plain(plain_params, {.lr = 0.1});
  run(plain, plain_params, 0, 2);
  EXPECT_EQ(plain.state().size(), 4u);
}

TEST_F(SgdStateTest, BadStatesAreErrorsNamingTheEntryAndLoadNothing) {
  auto params = fresh_params(initial_);
  Sgd source(params, kOptions);
  run(source, params, 0, 2);
  const NamedTensors good = source.state();

  auto target_params = fresh_params(initial_);
  Sgd target(target_params, kOptions);
  target.set_lr(0.7);
  const auto without = [&](const std::string& name) {
    NamedTensors out;
    for (const auto& entry : good) {
      if (entry.first != name) out.push_back(entry);
    }
    return out;
  };
  const auto replaced = [&](const std::string& name, Tensor t) {
    NamedTensors out = good;
    for (auto& entry : out) {
      if (entry.first == name) entry.second = t;
    }
    return out;
  };
  expect_error(target.load_state(without("state.layer2.weight.momentum_buffer")), absl::StatusCode::kNotFound,
               {"Sgd.load_state", "missing", "\"state.layer2.weight.momentum_buffer\""});
  expect_error(target.load_state(without("state.layer0.weight.step")), absl::StatusCode::kNotFound,
               {"\"state.layer0.weight.step\""});
  expect_error(target.load_state(without("param_groups.0.lr")), absl::StatusCode::kNotFound, {"\"param_groups.0.lr\""});
  expect_error(target.load_state(replaced("state.layer0.weight.momentum_buffer", zeros({3, 4}))),
               absl::StatusCode::kInvalidArgument,
               {"\"state.layer0.weight.momentum_buffer\"", "f32[3, 4]", "expected f32[4, 3]"});
  expect_error(target.load_state(replaced("state.layer0.weight.momentum_buffer", zeros({4, 3}, {DType::kF64}))),
               absl::StatusCode::kInvalidArgument, {"\"state.layer0.weight.momentum_buffer\"", "f64"});
  NamedTensors extra = good;
  extra.emplace_back("state.conv9.weight.step", zeros({}, {DType::kI64}));
  expect_error(target.load_state(extra), absl::StatusCode::kInvalidArgument,
               {"unexpected entries", "\"state.conv9.weight.step\""});
  NamedTensors twice = good;
  twice.push_back(good.front());
  expect_error(target.load_state(twice), absl::StatusCode::kInvalidArgument, {"appears twice"});
  expect_error(target.load_state(replaced("state.layer0.weight.step", zeros({}, {DType::kF32}))),
               absl::StatusCode::kInvalidArgument, {"\"state.layer0.weight.step\"", "one integer"});

  // Nothing was loaded by the failed attempts.
  EXPECT_EQ(target.lr(0), 0.7);
  EXPECT_EQ(target.state().size(), 4u);  // lr and three step counts, no buffers
  ASSERT_OK(target.load_state(good));
  EXPECT_EQ(target.lr(0), 0.1);
}

}  // namespace
}  // namespace ts::optim
