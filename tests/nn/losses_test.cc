// Losses against float64 hand computations, gradcheck of each, PyTorch's
// label-smoothing formula, the MLBench regularization terms, accuracy, and
// input errors.
#include "nn/losses.h"

#include <cmath>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::random_tensor;
using ::ts::testing::value_or_die;
using Vars = std::vector<Variable>;

class LossesTest : public ts::testing::SeededTest {
 protected:
  Tensor targets(int64_t n, int64_t classes) {
    std::vector<int64_t> t(n);
    for (auto& e : t) e = static_cast<int64_t>(rng()() % classes);
    return value_or_die(from_vector<int64_t>(t, {n}));
  }
};

double scalar(const Variable& v) { return value_or_die(item<double>(v.data())); }

// Per-row cross-entropy with PyTorch's label smoothing, in double.
std::vector<double> ref_cross_entropy(const std::vector<double>& x, const std::vector<int64_t>& t, int64_t c,
                                      double s) {
  std::vector<double> out;
  for (size_t i = 0; i < t.size(); ++i) {
    double m = -INFINITY;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, x[i * c + j]);
    double z = 0;
    for (int64_t j = 0; j < c; ++j) z += std::exp(x[i * c + j] - m);
    const double lse = m + std::log(z);
    double sum_logp = 0;
    for (int64_t j = 0; j < c; ++j) sum_logp += x[i * c + j] - lse;
    const double nll = lse - x[i * c + t[i]];
    out.push_back((1 - s) * nll - s / c * sum_logp);
  }
  return out;
}

TEST_F(LossesTest, CrossEntropyMatchesReferenceForEveryReductionAndSmoothing) {
  const int64_t n = 6, c = 5;
  const Tensor logits = random_tensor(rng(), {n, c}, DType::kF32, -4, 4);
  const Tensor t = targets(n, c);
  const auto x = value_or_die(to_vector<double>(logits));
  const auto tv = value_or_die(to_vector<int64_t>(t));
  for (double s : {0.0, 0.1, 1.0}) {
    const std::vector<double> rows = ref_cross_entropy(x, tv, c, s);
    double total = 0;
    for (double r : rows) total += r;
    ASSERT_OK_AND_ASSIGN(Variable none, cross_entropy(Variable(logits), t, {Reduction::kNone, s}));
    ts::testing::expect_close(none.data(), {{n}, rows}, 1e-5);
    ASSERT_OK_AND_ASSIGN(Variable sum, cross_entropy(Variable(logits), t, {Reduction::kSum, s}));
    EXPECT_NEAR(scalar(sum), total, 1e-5 * std::abs(total));
    ASSERT_OK_AND_ASSIGN(Variable mean, cross_entropy(Variable(logits), t, {Reduction::kMean, s}));
    EXPECT_NEAR(scalar(mean), total / n, 1e-5 * std::abs(total / n));
  }
}

TEST_F(LossesTest, CrossEntropyIsStableForLargeLogits) {
  ASSERT_OK_AND_ASSIGN(Tensor logits, from_vector<float>({1000, 0, -1000, 0, 0, 0}, {2, 3}));
  ASSERT_OK_AND_ASSIGN(Tensor t, from_vector<int64_t>({1, 0}, {2}));
  ASSERT_OK_AND_ASSIGN(Variable loss, cross_entropy(Variable(logits), t, {Reduction::kNone}));
  const auto v = value_or_die(to_vector<double>(loss.data()));
  EXPECT_NEAR(v[0], 1000, 1e-3);
  EXPECT_NEAR(v[1], std::log(3.0), 1e-6);
}

TEST_F(LossesTest, GradchecksOfClassificationLosses) {
  const int64_t n = 4, c = 3;
  const Tensor logits = random_tensor(rng(), {n, c}, DType::kF64, -2, 2);
  const Tensor t = targets(n, c);
  for (Reduction r : {Reduction::kNone, Reduction::kMean, Reduction::kSum}) {
    EXPECT_OK(autograd::gradcheck([&](const Vars& v) { return cross_entropy(v[0], t, {r, 0.2}); }, {logits}));
    EXPECT_OK(autograd::gradcheck(
        [&](const Vars& v) -> absl::StatusOr<Variable> {
          ASSIGN_OR_RETURN(Variable lp, autograd::log_softmax(v[0], 1));
          return nll_loss(lp, t, r);
        },
        {logits}));
  }
}

TEST_F(LossesTest, NllLossPicksTheTargetColumn) {
  ASSERT_OK_AND_ASSIGN(Tensor lp, from_vector<double>({-1, -2, -3, -4, -5, -6}, {2, 3}));
  ASSERT_OK_AND_ASSIGN(Tensor t, from_vector<int32_t>({2, 0}, {2}));
  ASSERT_OK_AND_ASSIGN(Variable mean, nll_loss(Variable(lp), t));
  EXPECT_DOUBLE_EQ(scalar(mean), (3 + 4) / 2.0);
  ASSERT_OK_AND_ASSIGN(Variable sum, nll_loss(Variable(lp), t, Reduction::kSum));
  EXPECT_DOUBLE_EQ(scalar(sum), 7);
}

TEST_F(LossesTest, BinaryCrossEntropyWithLogits) {
  const Tensor x = random_tensor(rng(), {7}, DType::kF64, -30, 30);
  const Tensor y = random_tensor(rng(), {7}, DType::kF64, 0, 1);
  const auto xv = value_or_die(to_vector<double>(x)), yv = value_or_die(to_vector<double>(y));
  std::vector<double> expected;
  for (size_t i = 0; i < xv.size(); ++i) {
    // -(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))), with the logs written stably.
    const double log_p = -std::log1p(std::exp(-xv[i])), log_q = -std::log1p(std::exp(xv[i]));
    expected.push_back(-(yv[i] * log_p + (1 - yv[i]) * log_q));
  }
  ASSERT_OK_AND_ASSIGN(Variable none, binary_cross_entropy_with_logits(Variable(x), y, Reduction::kNone));
  ts::testing::expect_close(none.data(), {{7}, expected}, 1e-12, 1e-12);
  for (Reduction r : {Reduction::kNone, Reduction::kMean, Reduction::kSum}) {
    EXPECT_OK(autograd::gradcheck([&](const Vars& v) { return binary_cross_entropy_with_logits(v[0], y, r); },
                                  {random_tensor(rng(), {7}, DType::kF64, -3, 3)}));
  }
  // At x = 0 the gradient is sigmoid(0) - y = 0.5 - y exactly.
  ASSERT_OK_AND_ASSIGN(Tensor zero, zeros({2}, {DType::kF64}));
  ASSERT_OK_AND_ASSIGN(Tensor labels, from_vector<double>({1, 0}, {2}));
  Variable z(zero, true);
  ASSERT_OK_AND_ASSIGN(Variable loss, binary_cross_entropy_with_logits(z, labels, Reduction::kSum));
  EXPECT_DOUBLE_EQ(scalar(loss), 2 * std::log(2.0));
  ASSERT_OK(loss.backward());
  EXPECT_EQ(value_or_die(to_vector<double>(z.grad())), (std::vector<double>{-0.5, 0.5}));
}

TEST_F(LossesTest, L1AndMse) {
  const Tensor a = random_tensor(rng(), {3, 4}, DType::kF64);
  const Tensor b = random_tensor(rng(), {3, 4}, DType::kF64);
  const auto av = value_or_die(to_vector<double>(a)), bv = value_or_die(to_vector<double>(b));
  double l1 = 0, l2 = 0;
  for (size_t i = 0; i < av.size(); ++i) {
    l1 += std::abs(av[i] - bv[i]);
    l2 += (av[i] - bv[i]) * (av[i] - bv[i]);
  }
  ASSERT_OK_AND_ASSIGN(Variable m1, l1_loss(Variable(a), Variable(b)));
  EXPECT_NEAR(scalar(m1), l1 / 12, 1e-12);
  ASSERT_OK_AND_ASSIGN(Variable s2, mse_loss(Variable(a), Variable(b), Reduction::kSum));
  EXPECT_NEAR(scalar(s2), l2, 1e-12);
  EXPECT_OK(autograd::gradcheck([](const Vars& v) { return l1_loss(v[0], v[1], Reduction::kNone); }, {a, b}));
  EXPECT_OK(autograd::gradcheck([](const Vars& v) { return mse_loss(v[0], v[1]); }, {a, b}));
  expect_error(mse_loss(Variable(a), Variable(value_or_die(zeros({4, 3}, {DType::kF64})))).status(),
               absl::StatusCode::kInvalidArgument, {"mse_loss", "[3, 4]", "[4, 3]"});
}

TEST_F(LossesTest, RegularizationMatchesMlbench) {
  const Tensor w1 = random_tensor(rng(), {3, 2}, DType::kF64);
  const Tensor w2 = random_tensor(rng(), {4}, DType::kF64);
  double abs_sum = 0, sq_sum = 0;
  for (const Tensor& w : {w1, w2}) {
    for (double e : value_or_die(to_vector<double>(w))) {
      abs_sum += std::abs(e);
      sq_sum += e * e;
    }
  }
  const std::vector<Variable> params = {Variable(w1, true), Variable(w2, true)};
  // MLBench's BCELossRegularized: l2 / 2 * sum ||p||_2^2 and l1 * sum ||p||_1.
  ASSERT_OK_AND_ASSIGN(Variable r2, l2_regularization(params, 2.5e-6));
  EXPECT_NEAR(scalar(r2), 2.5e-6 / 2 * sq_sum, 1e-18);
  ASSERT_OK_AND_ASSIGN(Variable r1, l1_regularization(params, 0.1));
  EXPECT_NEAR(scalar(r1), 0.1 * abs_sum, 1e-14);
  EXPECT_OK(autograd::gradcheck([](const Vars& v) { return l2_regularization(v, 0.3); }, {w1, w2}));
  EXPECT_OK(autograd::gradcheck([](const Vars& v) { return l1_regularization(v, 0.3); }, {w1, w2}));
  expect_error(l2_regularization({}, 1).status(), absl::StatusCode::kInvalidArgument,
               {"l2_regularization", "no parameters"});
}

TEST_F(LossesTest, TopKAccuracy) {
  // Row targets: 1 (rank 0), 0 (rank 2), 2 (tied for first with column 0).
  ASSERT_OK_AND_ASSIGN(Tensor logits,
                       from_vector<float>({0.1f, 0.9f, 0.0f, 0.1f, 0.5f, 0.3f, 0.7f, 0.2f, 0.7f}, {3, 3}));
  ASSERT_OK_AND_ASSIGN(Tensor t, from_vector<int64_t>({1, 0, 2}, {3}));
  EXPECT_EQ(value_or_die(topk_correct(logits, t, 1)), 2);
  EXPECT_EQ(value_or_die(topk_correct(logits, t, 2)), 2);
  EXPECT_EQ(value_or_die(topk_correct(logits, t, 3)), 3);
  EXPECT_DOUBLE_EQ(value_or_die(accuracy(logits, t)), 2.0 / 3);
  ASSERT_OK_AND_ASSIGN(Tensor bl, from_vector<float>({2.0f, -1.0f, 0.5f, -3.0f}, {4, 1}));
  ASSERT_OK_AND_ASSIGN(Tensor by, from_vector<float>({1, 0, 0, 1}, {4}));
  EXPECT_EQ(value_or_die(binary_correct(bl, by)), 2);
  expect_error(topk_correct(logits, t, 0).status(), absl::StatusCode::kInvalidArgument, {"k = 0"});
}

TEST_F(LossesTest, ErrorsNameTheLossAndShapes) {
  const Tensor logits = random_tensor(rng(), {4, 3}, DType::kF32);
  expect_error(cross_entropy(Variable(logits), targets(5, 3)).status(), absl::StatusCode::kInvalidArgument,
               {"cross_entropy", "f32[4, 3]", "i64[5]"});
  expect_error(cross_entropy(Variable(logits), value_or_die(zeros({4}))).status(),
               absl::StatusCode::kInvalidArgument, {"cross_entropy", "f32[4]"});
  expect_error(cross_entropy(Variable(logits), targets(4, 3), {Reduction::kMean, 1.5}).status(),
               absl::StatusCode::kInvalidArgument, {"label_smoothing 1.5"});
  ASSERT_OK_AND_ASSIGN(Tensor out_of_range, from_vector<int64_t>({0, 1, 3, 2}, {4}));
  expect_error(cross_entropy(Variable(logits), out_of_range).status(), absl::StatusCode::kOutOfRange,
               {"cross_entropy", "index 3"});
  expect_error(binary_cross_entropy_with_logits(Variable(logits), value_or_die(zeros({4}))).status(),
               absl::StatusCode::kInvalidArgument,
               {"binary_cross_entropy_with_logits", "f32[4, 3]", "f32[4]"});
}

}  // namespace
}  // namespace ts::nn
