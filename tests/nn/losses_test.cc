// Losses against float64 hand computations, gradcheck of each, PyTorch's
// label-smoothing formula, the MLBench regularization terms, accuracy, and
// input errors. The fused cross_entropy is checked, for every combination of
// reduction, ignored rows, class weights and label smoothing, against
// PyTorch's definition composed of autograd ops in float64 (values and
// gradients), by gradcheck, and on CUDA against the CPU.
#include "nn/losses.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_close;
using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;
using ::ts::testing::ref_of;
using Vars = std::vector<Variable>;

class LossesTest : public ts::testing::SeededTest {
 protected:
  Tensor targets(int64_t n, int64_t classes) { return from_vector<int64_t>(target_values(n, classes), {n}); }
  std::vector<int64_t> target_values(int64_t n, int64_t classes) {
    std::vector<int64_t> t(n);
    for (auto& e : t) e = static_cast<int64_t>(rng()() % classes);
    return t;
  }
};

double scalar(const Variable& v) { return item<double>(v.data()); }

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
  const auto x = to_vector<double>(logits);
  const auto tv = to_vector<int64_t>(t);
  for (double s : {0.0, 0.1, 1.0}) {
    const std::vector<double> rows = ref_cross_entropy(x, tv, c, s);
    double total = 0;
    for (double r : rows) total += r;
    const Variable none = cross_entropy(Variable(logits), t, {.reduction = Reduction::kNone, .label_smoothing = s});
    expect_close(none.data(), {{n}, rows}, 1e-5);
    const Variable sum = cross_entropy(Variable(logits), t, {.reduction = Reduction::kSum, .label_smoothing = s});
    EXPECT_NEAR(scalar(sum), total, 1e-5 * std::abs(total));
    const Variable mean = cross_entropy(Variable(logits), t, {.reduction = Reduction::kMean, .label_smoothing = s});
    EXPECT_NEAR(scalar(mean), total / n, 1e-5 * std::abs(total / n));
  }
}

TEST_F(LossesTest, CrossEntropyIsStableForLargeLogits) {
  const Tensor logits = from_vector<float>({1000, 0, -1000, 0, 0, 0}, {2, 3});
  const Tensor t = from_vector<int64_t>({1, 0}, {2});
  const auto v = to_vector<double>(cross_entropy(Variable(logits), t, {.reduction = Reduction::kNone}).data());
  EXPECT_NEAR(v[0], 1000, 1e-3);
  EXPECT_NEAR(v[1], std::log(3.0), 1e-6);
}

// torch.nn.functional.cross_entropy as PyTorch defines it, composed of
// autograd ops in the logits' dtype: log_softmax, the target's column
// (gather) times its class weight, the label-smoothing term
// -sum_c w_c log_softmax_c, ignored rows masked out, and the mean divided by
// the sum of the kept rows' weights.
Variable composed_cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& o) {
  const int64_t n = logits.size(0), classes = logits.size(1);
  const Tensor w = o.weight.defined() ? to(o.weight, logits.dtype()) : ones({classes}, {logits.dtype()});
  const Tensor kept = ne(target, o.ignore_index);
  // Ignored rows pick class 0, then weigh 0.
  const Tensor picked = where(kept, target, 0);
  const Tensor row_weight = where(kept, index_select(w, 0, picked), 0);
  const Variable log_probs = autograd::log_softmax(logits, 1);
  const Variable nll =
      -autograd::reshape(autograd::gather(log_probs, 1, picked.unsqueeze(1)), {n}) * Variable(row_weight);
  const Variable smooth = -autograd::sum(log_probs * Variable(w), {1}) * Variable(to(kept, logits.dtype()));
  const Variable rows = (1 - o.label_smoothing) * nll + (o.label_smoothing / classes) * smooth;
  switch (o.reduction) {
    case Reduction::kNone:
      return rows;
    case Reduction::kSum:
      return autograd::sum(rows);
    case Reduction::kMean:
      return autograd::sum(rows) / Variable(sum(row_weight));
  }
  return Variable();
}

enum class Ignored {
  kNoRow,
  kSomeRows,         // targets -100 (the default ignore_index)
  kSomeRowsOfClass,  // ignore_index 2, a class some rows have
  kEveryRow,
};

struct CrossEntropyCase {
  Reduction reduction;
  Ignored ignored;
  bool weighted;
  double smoothing;

  std::string describe() const {
    return absl::StrCat("reduction ", static_cast<int>(reduction), ", ignored ", static_cast<int>(ignored),
                        weighted ? ", weighted" : "", ", label_smoothing ", smoothing);
  }
  // The one case where PyTorch's value is NaN (0 / 0) and the gradient zero.
  bool nan_mean() const { return reduction == Reduction::kMean && ignored == Ignored::kEveryRow; }
};

std::vector<CrossEntropyCase> every_cross_entropy_case() {
  std::vector<CrossEntropyCase> cases;
  for (Reduction r : {Reduction::kNone, Reduction::kSum, Reduction::kMean}) {
    for (Ignored i : {Ignored::kNoRow, Ignored::kSomeRows, Ignored::kSomeRowsOfClass, Ignored::kEveryRow}) {
      for (bool w : {false, true}) {
        for (double s : {0.0, 0.2, 1.0}) cases.push_back({r, i, w, s});
      }
    }
  }
  return cases;
}

class CrossEntropyTest : public LossesTest {
 protected:
  static constexpr int64_t kRows = 6, kClasses = 4;

  struct Inputs {
    Tensor target;
    CrossEntropyOptions options;
  };
  Inputs inputs(const CrossEntropyCase& c) {
    std::vector<int64_t> t = target_values(kRows, kClasses);
    CrossEntropyOptions o{.reduction = c.reduction, .label_smoothing = c.smoothing};
    switch (c.ignored) {
      case Ignored::kNoRow:
        break;
      case Ignored::kSomeRows:
        t[1] = t[4] = o.ignore_index;
        break;
      case Ignored::kSomeRowsOfClass:
        o.ignore_index = 2;
        t[0] = 2;
        t[3] = 1;
        break;
      case Ignored::kEveryRow:
        for (auto& e : t) e = o.ignore_index;
        break;
    }
    if (c.weighted) o.weight = random_tensor(rng(), {kClasses}, DType::kF64, 0.25, 2);
    return {from_vector<int64_t>(t, {kRows}), o};
  }

  // What the loss's backward starts from: random per-row gradients for
  // kNone (they scale each row's gradient), else 1.
  Tensor seed_grad(Reduction reduction) {
    return reduction == Reduction::kNone ? random_tensor(rng(), {kRows}, DType::kF64, 0.5, 1.5) : Tensor();
  }
};

// Logits of every floating dtype (in a transposed layout) on the CPU against
// the float64 composition of the same (rounded) values: the loss, f32 for
// 16-bit logits, within its own dtype's tolerance, the gradient within the
// logits' dtype's.
TEST_F(CrossEntropyTest, EveryFloatingDtypeMatchesTheComposedF64Reference) {
  for (const DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    const DType loss_dtype = dtype == DType::kF64 ? DType::kF64 : DType::kF32;
    for (const CrossEntropyCase& c : every_cross_entropy_case()) {
      SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", c.describe()));
      const Inputs in = inputs(c);
      const Tensor logits = random_tensor(rng(), {kRows, kClasses}, dtype, -3, 3, ts::testing::Layout::kTransposed);
      const Tensor seed = seed_grad(c.reduction);

      Variable x(logits, true);
      const Variable loss = cross_entropy(x, in.target, in.options);
      ASSERT_EQ(loss.dtype(), loss_dtype);
      loss.backward(seed.defined() ? to(seed, loss_dtype) : Tensor());
      ASSERT_EQ(x.grad().dtype(), dtype);

      Variable x64(to(logits, DType::kF64), true);
      const Variable expected = composed_cross_entropy(x64, in.target, in.options);
      expect_close(loss.data(), ref_of(expected.data()), ts::testing::tolerance(loss_dtype));
      if (c.nan_mean()) {
        EXPECT_TRUE(std::isnan(scalar(loss)));
        expect_close(x.grad(), ref_of(zeros({kRows, kClasses})), 0);
        continue;
      }
      expected.backward(seed);
      // Normwise: an entry p - 1 near zero keeps the absolute error of p.
      const Tensor expected_grad = x64.grad();
      const double scale = std::max(item<double>(max(abs(expected_grad))), 1e-3);
      expect_close(x.grad(), ref_of(expected_grad), ts::testing::tolerance(dtype), scale);
    }
  }
}

TEST_F(CrossEntropyTest, GradcheckOfEveryCombination) {
  for (const CrossEntropyCase& c : every_cross_entropy_case()) {
    if (c.nan_mean()) continue;  // NaN has no finite difference; its zero gradient is checked above
    SCOPED_TRACE(c.describe());
    const Inputs in = inputs(c);
    const Tensor logits = random_tensor(rng(), {kRows, kClasses}, DType::kF64, -3, 3);
    EXPECT_OK(autograd::gradcheck([&](const Vars& v) { return cross_entropy(v[0], in.target, in.options); }, {logits}));
  }
}

TEST_F(CrossEntropyTest, I32TargetsMatchI64) {
  const CrossEntropyCase c{Reduction::kMean, Ignored::kSomeRows, true, 0.2};
  const Inputs in = inputs(c);
  const Tensor logits = random_tensor(rng(), {kRows, kClasses}, DType::kF64, -3, 3);
  EXPECT_EQ(scalar(cross_entropy(Variable(logits), to(in.target, DType::kI32), in.options)),
            scalar(cross_entropy(Variable(logits), in.target, in.options)));
}

TEST_F(CrossEntropyTest, HalfLogitsGiveAnF32Loss) {
  // 8192 rows of loss ~11.1: their sum (~91,000) is beyond f16's 65,504, their
  // mean is not.
  const int64_t n = 8192;
  std::vector<float> values(n * 4, 0.0f);
  for (int64_t r = 0; r < n; ++r) values[r * 4 + 3] = -10;
  Variable x(to(from_vector<float>(values, {n, 4}), DType::kF16), true);
  const Variable loss = cross_entropy(x, full({n}, 3, {DType::kI64}));
  ASSERT_EQ(loss.dtype(), DType::kF32);
  const double row = std::log(3 + std::exp(-10.0)) + 10;
  // Rows computed in f16 would each round to 11.1016 (0.003 off).
  EXPECT_NEAR(scalar(loss), row, 1e-4 * row);
  loss.backward();
  // d/dx_t = (p_t - 1) / N.
  const std::vector<double> g = to_vector<double>(x.grad().select(0, 0));
  EXPECT_NEAR(g[3], (std::exp(-10.0) / (3 + std::exp(-10.0)) - 1) / n, 1e-3 / n);
}

TEST(LossDtypeTest, EveryLossOfHalfInputsIsF32AndSoIsItsGradientPath) {
  for (const DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    Variable x(to(from_vector<float>({0.5f, -1.0f, 2.0f, 0.25f}, {2, 2}), dtype), true);
    const Tensor classes = from_vector<int64_t>({1, 0}, {2});
    const Tensor half_target = to(from_vector<float>({1, 0, 0, 1}, {2, 2}), dtype);
    for (const Variable& loss : {cross_entropy(x, classes, {.reduction = Reduction::kSum}), nll_loss(x, classes),
                                 binary_cross_entropy_with_logits(x, half_target), mse_loss(x, Variable(half_target)),
                                 l1_loss(x, Variable(half_target)), l2_regularization({x}, 0.1),
                                 activation_regularization(x, 2), temporal_activation_regularization(x, 1)}) {
      EXPECT_EQ(loss.dtype(), DType::kF32);
      x.clear_grad();
      loss.backward();
      EXPECT_EQ(x.grad().dtype(), dtype);  // cast back at the input
    }
  }
}

// Every floating dtype of logits: the loss (f32 for 16-bit logits, which
// both devices compute in f32 from the same values) within its dtype's
// tolerance, the gradient within the logits' dtype's, normwise.
TEST_F(CrossEntropyTest, CudaMatchesCpu) {
  TS_SKIP_WITHOUT_CUDA();
  for (const DType dtype : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    const DType loss_dtype = dtype == DType::kF64 ? DType::kF64 : DType::kF32;
    for (const CrossEntropyCase& c : every_cross_entropy_case()) {
      SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", c.describe()));
      Inputs in = inputs(c);
      const Tensor logits = random_tensor(rng(), {kRows, kClasses}, dtype, -3, 3);
      const Tensor seed = seed_grad(c.reduction);
      Variable cpu_x(logits, true);
      const Variable cpu_loss = cross_entropy(cpu_x, in.target, in.options);
      ASSERT_EQ(cpu_loss.dtype(), loss_dtype);
      cpu_loss.backward(seed.defined() ? to(seed, loss_dtype) : Tensor());

      const Device cuda = Device::cuda(0);
      Variable cuda_x(ts::testing::to_device_keeping_layout(logits, cuda, /*extra_offset=*/1), true);
      if (in.options.weight.defined()) in.options.weight = to(in.options.weight, cuda);
      const Variable cuda_loss = cross_entropy(cuda_x, to(in.target, cuda), in.options);
      cuda_loss.backward(seed.defined() ? to(to(seed, loss_dtype), cuda) : Tensor());
      ts::testing::expect_close_to_cpu(cuda_loss.data(), cpu_loss.data(), /*normwise=*/false, "loss");
      ASSERT_EQ(cuda_x.grad().dtype(), dtype);
      ts::testing::expect_close_to_cpu(cuda_x.grad(), cpu_x.grad(), /*normwise=*/true, "gradient");
    }
  }
}

TEST_F(CrossEntropyTest, CudaMarksAnOutOfRangeTargetNaN) {
  TS_SKIP_WITHOUT_CUDA();
  const Device cuda = Device::cuda(0);
  const Tensor logits = to(random_tensor(rng(), {3, kClasses}, DType::kF32), cuda);
  const Tensor target = to(from_vector<int64_t>({0, kClasses, 1}, {3}), cuda);
  const std::vector<float> rows =
      to_vector<float>(cross_entropy(Variable(logits), target, {.reduction = Reduction::kNone}).data());
  EXPECT_FALSE(std::isnan(rows[0]));
  EXPECT_TRUE(std::isnan(rows[1]));
  EXPECT_FALSE(std::isnan(rows[2]));
}

TEST_F(CrossEntropyTest, ErrorsNameTheOpAndShapes) {
  const Tensor logits = random_tensor(rng(), {4, 3}, DType::kF32);
  expect_throws(absl::StatusCode::kInvalidArgument, {"cross_entropy", "f32[4, 3]", "i64[5]"},
                [&] { cross_entropy(Variable(logits), targets(5, 3)); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"cross_entropy", "f32[4, 3]", "f32[4]"},
                [&] { cross_entropy(Variable(logits), zeros({4})); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"cross_entropy", "f32[4, 3]", "i64[4, 1]"},
                [&] { cross_entropy(Variable(logits), targets(4, 3).unsqueeze(1)); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"cross_entropy", "f32[2, 2, 3]", "i64[2]"}, [&] {
    cross_entropy(Variable(reshape(logits, {2, 2, 3})), targets(2, 3));
  });
  expect_throws(absl::StatusCode::kOutOfRange, {"cross_entropy", "target 3", "f32[4, 3]"}, [&] {
    cross_entropy(Variable(logits), from_vector<int64_t>({0, 1, 3, 2}, {4}));
  });
  expect_throws(absl::StatusCode::kOutOfRange, {"cross_entropy", "target -1", "f32[4, 3]"}, [&] {
    cross_entropy(Variable(logits), from_vector<int64_t>({0, -1, 1, 2}, {4}));
  });
  // The gradient op is public too: it checks the targets it indexes by.
  expect_throws(absl::StatusCode::kOutOfRange, {"cross_entropy backward", "target -5"}, [&] {
    cross_entropy_rows_grad(ones({4}), logits, from_vector<int64_t>({0, -5, 1, 2}, {4}), Tensor(), zeros({4}), -100, 0);
  });
  expect_throws(absl::StatusCode::kInvalidArgument, {"cross_entropy", "class weights", "f32[4]", "f32[4, 3]"},
                [&] { cross_entropy(Variable(logits), targets(4, 3), {.weight = ones({4})}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"cross_entropy", "label_smoothing 1.5"},
                [&] { cross_entropy(Variable(logits), targets(4, 3), {.label_smoothing = 1.5}); });
}

TEST_F(LossesTest, GradchecksOfClassificationLosses) {
  const int64_t n = 4, c = 3;
  const Tensor logits = random_tensor(rng(), {n, c}, DType::kF64, -2, 2);
  const Tensor t = targets(n, c);
  for (Reduction r : {Reduction::kNone, Reduction::kMean, Reduction::kSum}) {
    EXPECT_OK(autograd::gradcheck(
        [&](const Vars& v) { return cross_entropy(v[0], t, {.reduction = r, .label_smoothing = 0.2}); }, {logits}));
    EXPECT_OK(
        autograd::gradcheck([&](const Vars& v) { return nll_loss(autograd::log_softmax(v[0], 1), t, r); }, {logits}));
  }
}

TEST_F(LossesTest, NllLossPicksTheTargetColumn) {
  const Tensor lp = from_vector<double>({-1, -2, -3, -4, -5, -6}, {2, 3});
  const Tensor t = from_vector<int32_t>({2, 0}, {2});
  EXPECT_DOUBLE_EQ(scalar(nll_loss(Variable(lp), t)), (3 + 4) / 2.0);
  EXPECT_DOUBLE_EQ(scalar(nll_loss(Variable(lp), t, Reduction::kSum)), 7);
}

TEST_F(LossesTest, BinaryCrossEntropyWithLogits) {
  const Tensor x = random_tensor(rng(), {7}, DType::kF64, -30, 30);
  const Tensor y = random_tensor(rng(), {7}, DType::kF64, 0, 1);
  const auto xv = to_vector<double>(x), yv = to_vector<double>(y);
  std::vector<double> expected;
  for (size_t i = 0; i < xv.size(); ++i) {
    // -(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))), with the logs written stably.
    const double log_p = -std::log1p(std::exp(-xv[i])), log_q = -std::log1p(std::exp(xv[i]));
    expected.push_back(-(yv[i] * log_p + (1 - yv[i]) * log_q));
  }
  expect_close(binary_cross_entropy_with_logits(Variable(x), y, Reduction::kNone).data(), {{7}, expected}, 1e-12,
               1e-12);
  for (Reduction r : {Reduction::kNone, Reduction::kMean, Reduction::kSum}) {
    EXPECT_OK(autograd::gradcheck([&](const Vars& v) { return binary_cross_entropy_with_logits(v[0], y, r); },
                                  {random_tensor(rng(), {7}, DType::kF64, -3, 3)}));
  }
  // At x = 0 the gradient is sigmoid(0) - y = 0.5 - y exactly.
  Variable z(zeros({2}, {DType::kF64}), true);
  const Variable loss = binary_cross_entropy_with_logits(z, from_vector<double>({1, 0}, {2}), Reduction::kSum);
  EXPECT_DOUBLE_EQ(scalar(loss), 2 * std::log(2.0));
  loss.backward();
  EXPECT_EQ(to_vector<double>(z.grad()), (std::vector<double>{-0.5, 0.5}));
}

TEST_F(LossesTest, L1AndMse) {
  const Tensor a = random_tensor(rng(), {3, 4}, DType::kF64);
  const Tensor b = random_tensor(rng(), {3, 4}, DType::kF64);
  const auto av = to_vector<double>(a), bv = to_vector<double>(b);
  double l1 = 0, l2 = 0;
  for (size_t i = 0; i < av.size(); ++i) {
    l1 += std::abs(av[i] - bv[i]);
    l2 += (av[i] - bv[i]) * (av[i] - bv[i]);
  }
  EXPECT_NEAR(scalar(l1_loss(Variable(a), Variable(b))), l1 / 12, 1e-12);
  EXPECT_NEAR(scalar(mse_loss(Variable(a), Variable(b), Reduction::kSum)), l2, 1e-12);
  EXPECT_OK(autograd::gradcheck([](const Vars& v) { return l1_loss(v[0], v[1], Reduction::kNone); }, {a, b}));
  EXPECT_OK(autograd::gradcheck([](const Vars& v) { return mse_loss(v[0], v[1]); }, {a, b}));
  expect_throws(absl::StatusCode::kInvalidArgument, {"mse_loss", "[3, 4]", "[4, 3]"}, [&] {
    mse_loss(Variable(a), Variable(zeros({4, 3}, {DType::kF64})));
  });
}

TEST_F(LossesTest, RegularizationMatchesMlbench) {
  const Tensor w1 = random_tensor(rng(), {3, 2}, DType::kF64);
  const Tensor w2 = random_tensor(rng(), {4}, DType::kF64);
  double abs_sum = 0, sq_sum = 0;
  for (const Tensor& w : {w1, w2}) {
    for (double e : to_vector<double>(w)) {
      abs_sum += std::abs(e);
      sq_sum += e * e;
    }
  }
  const std::vector<Variable> params = {Variable(w1, true), Variable(w2, true)};
  // MLBench's BCELossRegularized: l2 / 2 * sum ||p||_2^2 and l1 * sum ||p||_1.
  EXPECT_NEAR(scalar(l2_regularization(params, 2.5e-6)), 2.5e-6 / 2 * sq_sum, 1e-18);
  EXPECT_NEAR(scalar(l1_regularization(params, 0.1)), 0.1 * abs_sum, 1e-14);
  EXPECT_OK(autograd::gradcheck([](const Vars& v) { return l2_regularization(v, 0.3); }, {w1, w2}));
  EXPECT_OK(autograd::gradcheck([](const Vars& v) { return l1_regularization(v, 0.3); }, {w1, w2}));
  expect_throws(absl::StatusCode::kInvalidArgument, {"l2_regularization", "no parameters"},
                [] { l2_regularization({}, 1); });
}

// AWD-LSTM's regularizers on h [T, B, H]: AR = alpha * mean(h^2), TAR =
// beta * mean((h[t] - h[t-1])^2) over the T - 1 differences.
TEST_F(LossesTest, ActivationRegularizersMatchAwdLstm) {
  const Tensor h = random_tensor(rng(), {5, 3, 4}, DType::kF64);
  const std::vector<double> v = ref_of(h).v;
  double sq = 0, change_sq = 0;
  for (size_t i = 0; i < v.size(); ++i) sq += v[i] * v[i];
  for (size_t i = 12; i < v.size(); ++i) change_sq += (v[i] - v[i - 12]) * (v[i] - v[i - 12]);
  EXPECT_NEAR(scalar(activation_regularization(Variable(h), 2)), 2 * sq / 60, 1e-14);
  EXPECT_NEAR(scalar(temporal_activation_regularization(Variable(h), 1)), change_sq / 48, 1e-14);
  EXPECT_EQ(scalar(temporal_activation_regularization(Variable(random_tensor(rng(), {1, 3, 4}, DType::kF64)), 1)), 0);
  EXPECT_OK(autograd::gradcheck([](const Vars& x) { return activation_regularization(x[0], 2); }, {h}));
  EXPECT_OK(autograd::gradcheck([](const Vars& x) { return temporal_activation_regularization(x[0], 1); }, {h}));
  expect_throws(absl::StatusCode::kInvalidArgument, {"temporal_activation_regularization", "i64[3]"},
                [] { temporal_activation_regularization(Variable(zeros({3}, {DType::kI64})), 1); });
}

TEST_F(LossesTest, TopKAccuracy) {
  // Row targets: 1 (rank 0), 0 (rank 2), 2 (tied for first with column 0,
  // which the tie ranks first: rank 1), 0 (tied with column 2: rank 0).
  const Tensor logits =
      from_vector<float>({0.1f, 0.9f, 0.0f, 0.1f, 0.5f, 0.3f, 0.7f, 0.2f, 0.7f, 0.7f, 0.2f, 0.7f}, {4, 3});
  const Tensor t = from_vector<int64_t>({1, 0, 2, 0}, {4});
  EXPECT_EQ(item<int64_t>(topk_correct(logits, t, 1)), 2);
  EXPECT_EQ(item<int64_t>(topk_correct(logits, t, 2)), 3);
  EXPECT_EQ(item<int64_t>(topk_correct(logits, t, 3)), 4);
  EXPECT_DOUBLE_EQ(accuracy(logits, t), 2.0 / 4);
  const Tensor bl = from_vector<float>({2.0f, -1.0f, 0.5f, -3.0f}, {4, 1});
  const Tensor by = from_vector<float>({1, 0, 0, 1}, {4});
  EXPECT_EQ(item<int64_t>(binary_correct(bl, by)), 2);
  expect_throws(absl::StatusCode::kInvalidArgument, {"k = 0"}, [&] { topk_correct(logits, t, 0); });
  // As torch.topk: k past the class count is an error, not a certain hit.
  expect_throws(absl::StatusCode::kInvalidArgument, {"k = 4", "3 classes"}, [&] { topk_correct(logits, t, 4); });
  // NaN beats every logit: a model gone NaN scores nothing. Rows: a NaN
  // rival, the target NaN (first of all, as torch.topk puts it), all NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor nan_logits = from_vector<float>({nan, 1, 2, 0, nan, 1, nan, nan, nan}, {3, 3});
  const Tensor nan_targets = from_vector<int64_t>({2, 1, 0}, {3});
  EXPECT_EQ(item<int64_t>(topk_correct(nan_logits, nan_targets, 1)), 0);
  EXPECT_EQ(item<int64_t>(topk_correct(nan_logits, nan_targets, 2)), 2);  // the first two rows
  EXPECT_EQ(item<int64_t>(binary_correct(from_vector<float>({nan, nan}, {2}), from_vector<float>({0, 1}, {2}))), 0);
  expect_throws(absl::StatusCode::kInvalidArgument, {"binary_correct", "f32[4, 1]", "f32[3]"},
                [&] { binary_correct(bl, zeros({3})); });
}

TEST_F(LossesTest, ErrorsNameTheLossAndShapes) {
  const Tensor logits = random_tensor(rng(), {4, 3}, DType::kF32);
  expect_throws(absl::StatusCode::kInvalidArgument, {"nll_loss", "f32[4, 3]", "i64[5]"},
                [&] { nll_loss(Variable(logits), targets(5, 3)); });
  expect_throws(absl::StatusCode::kOutOfRange, {"nll_loss", "index 3"}, [&] {
    nll_loss(Variable(logits), from_vector<int64_t>({0, 1, 3, 2}, {4}));
  });
  expect_throws(absl::StatusCode::kInvalidArgument, {"binary_cross_entropy_with_logits", "f32[4, 3]", "f32[4]"},
                [&] { binary_cross_entropy_with_logits(Variable(logits), zeros({4})); });
}

}  // namespace
}  // namespace ts::nn
