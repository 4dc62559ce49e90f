// Test support for the optimizers' exact resume: one parameter "w" stepped
// five times without a break, and again saved after two steps and finished
// by a fresh optimizer that loaded the saved state.
#pragma once

#include <memory>
#include <random>
#include <vector>

#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "optim/named_state.h"
#include "tests/tensor/testing.h"

namespace ts::optim::testing {

template <typename Optimizer>
struct ResumedRun {
  Tensor initial;
  NamedTensors saved;  // the state after two steps
  autograd::Variable uninterrupted_param, resumed_param;
  std::unique_ptr<Optimizer> uninterrupted, resumed;
};

// Loading the saved state must succeed (a failure is a test failure and the
// resumed run then starts fresh).
template <typename Optimizer, typename Options>
ResumedRun<Optimizer> run_with_resume(const Options& options, Dims shape, std::mt19937_64& rng) {
  ResumedRun<Optimizer> r;
  r.initial = ::ts::testing::random_tensor(rng, shape, DType::kF32);
  std::vector<Tensor> grads;
  for (int i = 0; i < 5; ++i) grads.push_back(::ts::testing::random_tensor(rng, shape, DType::kF32));
  const auto run = [&](Optimizer& optimizer, const autograd::Variable& p, int from, int to) {
    for (int step = from; step < to; ++step) {
      p.set_grad(grads[step]);
      optimizer.step();
    }
  };
  r.uninterrupted_param = autograd::Variable(clone(r.initial), true);
  r.uninterrupted =
      std::make_unique<Optimizer>(std::vector{std::pair{std::string("w"), r.uninterrupted_param}}, options);
  run(*r.uninterrupted, r.uninterrupted_param, 0, 5);

  const autograd::Variable first(clone(r.initial), true);
  Optimizer before(std::vector{std::pair{std::string("w"), first}}, options);
  run(before, first, 0, 2);
  r.saved = before.state();
  r.resumed_param = autograd::Variable(clone(first.data()), true);
  r.resumed = std::make_unique<Optimizer>(std::vector{std::pair{std::string("w"), r.resumed_param}}, options);
  EXPECT_OK(r.resumed->load_state(r.saved));
  run(*r.resumed, r.resumed_param, 2, 5);
  return r;
}

}  // namespace ts::optim::testing
