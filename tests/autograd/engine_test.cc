// The backward engine's semantics: accumulation where paths meet and across
// calls, reverse order, hooks firing once with the final gradient, graph
// freeing, no-grad mode and the errors users hit.
#include <vector>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "tensor/cpu_allocator.h"
#include "tests/tensor/testing.h"

namespace ts::autograd {
namespace {

using ::ts::testing::expect_throws;

Variable leaf(std::vector<float> values, Dims shape) { return Variable(from_vector<float>(values, shape), true); }

std::vector<float> values(const Tensor& t) { return to_vector<float>(t); }

TEST(EngineTest, GradientsMeetingAtANodeAreSummed) {
  // y = x*x + x: dy/dx = 2x + 1, reached along three edges.
  Variable x = leaf({1, -2, 3}, {3});
  Variable sq = mul(x, x);
  Variable y = add(sq, x);
  Variable total = sum(y);
  total.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{3, -3, 7}));
}

TEST(EngineTest, GradientsAccumulateAcrossBackwardCalls) {
  Variable x = leaf({1, 2}, {2});
  for (int i = 0; i < 2; ++i) {
    Variable y = mul(x, 3.0);
    Variable s = sum(y);
    s.backward();
  }
  EXPECT_EQ(values(x.grad()), (std::vector<float>{6, 6}));
  x.clear_grad();
  EXPECT_FALSE(x.grad().defined());
}

TEST(EngineTest, LeafGradientIsAPrivateContiguousCopy) {
  // sum's gradient is a broadcast view of one value; the leaf must not keep it.
  Variable x = leaf({1, 2, 3, 4}, {2, 2});
  Variable s = sum(x);
  s.backward();
  EXPECT_TRUE(x.grad().is_contiguous());
  x.grad().data<float>()[0] = 5;
  EXPECT_EQ(values(x.grad()), (std::vector<float>{5, 1, 1, 1}));
}

TEST(EngineTest, AGradientSharedByTwoLeavesIsNotAliased) {
  // add's backward hands the same tensor to both inputs.
  Variable a = leaf({1, 2}, {2});
  Variable b = leaf({3, 4}, {2});
  add(a, b).backward(from_vector<float>({5, 6}, {2}));
  a.grad().data<float>()[0] = 0;
  EXPECT_EQ(values(b.grad()), (std::vector<float>{5, 6}));
  EXPECT_NE(a.grad().storage(), b.grad().storage());
}

TEST(EngineTest, TheCallersGradientIsNotAliased) {
  Variable a = leaf({1, 2}, {2});
  const Tensor g = from_vector<float>({5, 6}, {2});
  a.backward(g);
  g.data<float>()[0] = 0;
  EXPECT_EQ(values(a.grad()), (std::vector<float>{5, 6}));
}

TEST(EngineTest, OnlyFloatingPointLeavesRequireGrad) {
  expect_throws(absl::StatusCode::kInvalidArgument, {"Variable", "i64[2]", "floating-point"},
                [] { Variable(zeros({2}, {DType::kI64}), true); });
  EXPECT_FALSE(Variable(zeros({2}, {DType::kI64})).requires_grad());
}

TEST(EngineTest, TheRootGradientTakesTheRootsDtype) {
  Variable a = leaf({1, 2}, {2});
  a.backward(from_vector<double>({5, 6}, {2}));
  EXPECT_EQ(a.grad().dtype(), DType::kF32);
  EXPECT_EQ(values(a.grad()), (std::vector<float>{5, 6}));
  Variable b = leaf({1, 2}, {2});
  softmax(b, 0).backward(from_vector<double>({1, 0}, {2}));
  EXPECT_EQ(b.grad().dtype(), DType::kF32);
}

TEST(EngineTest, CatAndStackGiveEachInputItsGradientInItsOwnDtype) {
  // cat promotes f16 and f32 to f32; the f16 input's gradient is f16.
  for (const bool stacked : {false, true}) {
    Variable h(ones({2}, {DType::kF16}), true);
    Variable f = leaf({1, 2}, {2});
    Variable joined = stacked ? stack({h, f}, 0) : cat({h, f}, 0);
    EXPECT_EQ(joined.dtype(), DType::kF32);
    sum(mul(joined, 3.0)).backward();
    EXPECT_EQ(h.grad().dtype(), DType::kF16);
    EXPECT_EQ(to_vector<float>(h.grad()), (std::vector<float>{3, 3}));
    EXPECT_EQ(values(f.grad()), (std::vector<float>{3, 3}));
  }
}

TEST(EngineTest, APrivateFirstGradientBecomesTheGradWithoutACopy) {
  // mul's backward makes a fresh 4 MiB gradient that nothing else holds:
  // the leaf takes it, as PyTorch's AccumulateGrad does, so backward needs
  // no second buffer of that size.
  constexpr int64_t kElements = int64_t{1} << 20;
  Variable x(ones({kElements}), true);
  Variable y = mul(x, 3.0);
  Variable s = sum(y);
  reset_cpu_peak_memory();
  const int64_t before = cpu_memory_stats().allocated_bytes;
  s.backward();
  const int64_t gradient_bytes = kElements * 4;
  EXPECT_LT(cpu_memory_stats().peak_allocated_bytes - before, 2 * gradient_bytes);
  EXPECT_EQ(x.grad().storage().use_count(), 1);
  EXPECT_EQ(to_vector<float>(x.grad())[kElements - 1], 3);
}

TEST(EngineTest, HooksFireOnceWithTheFinalGradientInReverseOrder) {
  // Two layers: w2 is used after w1 in forward, so its gradient is final first.
  Variable w1 = leaf({2}, {1}), w2 = leaf({3}, {1}), x = leaf({5}, {1});
  std::vector<std::pair<std::string, float>> fired;
  for (Variable* w : {&w1, &w2}) {
    w->set_name(w == &w1 ? "w1" : "w2");
    w->add_grad_ready_hook([&fired](const Variable& v) { fired.emplace_back(v.name(), v.grad().data<float>()[0]); });
  }
  Variable h = mul(x, w1);
  Variable h2 = mul(h, w1);  // w1 used twice: its hook waits for both
  Variable y = mul(h2, w2);
  Variable s = sum(y);
  s.backward();
  // y = x * w1^2 * w2: dy/dw1 = 2 x w1 w2 = 60, dy/dw2 = x w1^2 = 20.
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0], std::make_pair(std::string("w2"), 20.0f));
  EXPECT_EQ(fired[1], std::make_pair(std::string("w1"), 60.0f));
}

TEST(EngineTest, RemovedHookDoesNotFire) {
  Variable x = leaf({1}, {1});
  int calls = 0;
  const int id = x.add_grad_ready_hook([&calls](const Variable&) { ++calls; });
  x.remove_grad_ready_hook(id);
  Variable s = sum(x);
  s.backward();
  EXPECT_EQ(calls, 0);
}

// A leaf frozen after its forward gets no gradient and runs no hook, as in
// PyTorch; the other leaves' gradients are unchanged.
TEST(EngineTest, ALeafFrozenBeforeBackwardGetsNoGradient) {
  Variable frozen = leaf({3}, {1}), w = leaf({2}, {1});
  int calls = 0;
  frozen.add_grad_ready_hook([&calls](const Variable&) { ++calls; });
  Variable s = sum(mul(frozen, w));
  frozen.set_requires_grad(false);
  s.backward();
  EXPECT_FALSE(frozen.grad().defined());
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(w.grad().data<float>()[0], 3.0f);
}

TEST(EngineTest, HookErrorStopsBackward) {
  Variable x = leaf({1}, {1});
  x.add_grad_ready_hook([](const Variable&) { throw_error(absl::StatusCode::kUnavailable, "peer 1 is gone"); });
  Variable s = sum(x);
  expect_throws(absl::StatusCode::kUnavailable, {"peer 1 is gone"}, [&] { s.backward(); });
}

TEST(EngineTest, SecondBackwardNeedsRetainGraph) {
  Variable x = leaf({1, 2}, {2});
  Variable y = mul(x, x);
  Variable s = sum(y);
  s.backward(Tensor(), /*retain_graph=*/true);
  s.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{4, 8}));
  expect_throws(absl::StatusCode::kFailedPrecondition, {"sum", "second time", "retain_graph"}, [&] { s.backward(); });
}

TEST(EngineTest, NoGradGuardRecordsNothing) {
  Variable x = leaf({1}, {1});
  {
    NoGradGuard no_grad;
    Variable y = mul(x, 2.0);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
  }
  Variable y = mul(x, 2.0);
  EXPECT_TRUE(y.requires_grad());
}

TEST(EngineTest, DetachCutsTheGraph) {
  Variable x = leaf({3}, {1});
  Variable y = mul(x, x);
  Variable z = mul(y.detach(), x);  // dz/dx = y = 9
  z.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{9}));
}

TEST(EngineTest, OnlyInputsThatNeedGradientsGetThem) {
  Variable x = leaf({1, 2}, {2});
  Variable c(from_vector<float>({3, 4}, {2}));  // constant
  Variable y = mul(x, c);
  Variable s = sum(y);
  s.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{3, 4}));
  EXPECT_FALSE(c.grad().defined());
}

TEST(EngineTest, ErrorsNameTheProblem) {
  Variable c(from_vector<float>({1, 2}, {2}));
  expect_throws(absl::StatusCode::kInvalidArgument, {"does not require grad"}, [&] { c.backward(); });

  Variable x = leaf({1, 2}, {2});
  Variable y = mul(x, 2.0);
  expect_throws(absl::StatusCode::kInvalidArgument, {"one-element", "f32[2]"}, [&] { y.backward(); });
  Tensor wrong = zeros({3});
  expect_throws(absl::StatusCode::kInvalidArgument, {"f32[3]", "f32[2]"}, [&] { y.backward(wrong); });

  expect_throws(absl::StatusCode::kInvalidArgument, {"mul", "leaves"}, [&] { y.set_requires_grad(false); });
  Variable ints(zeros({2}, {DType::kI64}));
  expect_throws(absl::StatusCode::kInvalidArgument, {"floating"}, [&] { ints.set_requires_grad(true); });
}

TEST(EngineTest, BackwardWithSeveralRoots) {
  Variable x = leaf({2}, {1});
  Variable a = mul(x, 3.0);
  Variable b = mul(x, x);
  Tensor two = full({1}, 2.0);
  backward({a, b}, {Tensor(), two});  // 3 + 2 * 2x
  EXPECT_EQ(values(x.grad()), (std::vector<float>{11}));
}

TEST(EngineTest, DeepChainDoesNotRecurse) {
  // The engine is iterative: a 100k-node chain must not overflow the stack.
  Variable x = leaf({1}, {1});
  Variable y = x;
  for (int i = 0; i < 100000; ++i) y = add(y, 0.0);
  y.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{1}));
}

}  // namespace
}  // namespace ts::autograd
