// clip_grad_norm_ against hand-computed norms and torch's rule
// (coef = max_norm / (norm + 1e-6), applied when below 1), a float64
// reference on random gradients, and the edge cases.
#include "optim/clip.h"

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::optim {
namespace {

using autograd::Variable;
using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;

Variable with_grad(std::vector<double> grad, DType dtype = DType::kF64) {
  const Shape shape{static_cast<int64_t>(grad.size())};
  Variable v(zeros(shape, {dtype}), true);
  v.set_grad(to(from_vector<double>(grad, shape), dtype));
  return v;
}

std::vector<double> grad_of(const Variable& v) { return to_vector<double>(v.grad()); }

// The total norm clip_grad_norm_ returns (a 0-dim f64 tensor), read back.
double clip_norm(absl::Span<const Variable> params, double max_norm, double norm_type = 2.0,
                 bool error_if_nonfinite = false) {
  const Tensor total = clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite);
  EXPECT_EQ(total.dim(), 0);
  EXPECT_EQ(total.dtype(), DType::kF64);
  return item<double>(total);
}

TEST(ClipGradNormTest, TwoNormClipsToMaxNorm) {
  // |(3, 4, 12)| = 13; coef = 6.5 / (13 + 1e-6).
  std::vector<Variable> params = {with_grad({3, 4}), with_grad({12})};
  const double norm = clip_norm(params, 6.5);
  EXPECT_NEAR(norm, 13, 1e-12);
  const double coef = 6.5 / (13 + 1e-6);
  EXPECT_NEAR(grad_of(params[0])[0], 3 * coef, 1e-12);
  EXPECT_NEAR(grad_of(params[0])[1], 4 * coef, 1e-12);
  EXPECT_NEAR(grad_of(params[1])[0], 12 * coef, 1e-12);
}

TEST(ClipGradNormTest, BelowMaxNormNothingChanges) {
  std::vector<Variable> params = {with_grad({3, 4}), with_grad({12})};
  const double norm = clip_norm(params, 13);  // coef just below 1? 13 / (13 + 1e-6) < 1
  EXPECT_NEAR(norm, 13, 1e-12);
  EXPECT_LT(grad_of(params[1])[0], 12);  // torch clips here too: the 1e-6 makes coef < 1
  std::vector<Variable> loose = {with_grad({3, 4})};
  clip_norm(loose, 5.01);
  EXPECT_EQ(grad_of(loose[0]), (std::vector<double>{3, 4}));
}

TEST(ClipGradNormTest, InfinityAndOneNorms) {
  std::vector<Variable> params = {with_grad({3, -4}), with_grad({2})};
  const double inf_norm = clip_norm(params, 2, std::numeric_limits<double>::infinity());
  EXPECT_EQ(inf_norm, 4);
  EXPECT_NEAR(grad_of(params[0])[1], -4 * 2 / (4 + 1e-6), 1e-12);
  std::vector<Variable> more = {with_grad({3, -4}), with_grad({2})};
  const double one_norm = clip_norm(more, 100, 1);
  EXPECT_NEAR(one_norm, 9, 1e-12);
}

class ClipReferenceTest : public ::ts::testing::SeededTest {};

TEST_F(ClipReferenceTest, MatchesFloat64ReferenceOnRandomGradients) {
  for (double p : {1.0, 2.0, 3.0}) {
    std::vector<Variable> params;
    double sum = 0;
    std::vector<std::vector<double>> before;
    for (const Shape& shape : {Shape{5, 7}, Shape{13}, Shape{2, 3, 4}}) {
      Variable v(zeros(shape, {DType::kF32}), true);
      v.set_grad(random_tensor(rng(), shape, DType::kF32, -3, 3));
      before.push_back(grad_of(v));
      for (double g : before.back()) sum += std::pow(std::abs(g), p);
      params.push_back(v);
    }
    const double expected = std::pow(sum, 1 / p);
    const double norm = clip_norm(params, 1.0, p);
    EXPECT_NEAR(norm, expected, 1e-5 * expected) << "p = " << p;
    const double coef = 1.0 / (expected + 1e-6);
    for (size_t i = 0; i < params.size(); ++i) {
      const std::vector<double> after = grad_of(params[i]);
      for (size_t j = 0; j < after.size(); ++j) {
        EXPECT_NEAR(after[j], before[i][j] * coef, 1e-5 * std::abs(before[i][j] * coef) + 1e-7);
      }
    }
  }
}

TEST(ClipGradNormTest, HalfGradientsDoNotOverflowTheNorm) {
  // Each element fits f16 (max 65504); their 2-norm, 84852.8, does not.
  std::vector<Variable> params = {with_grad({60000, 60000}, DType::kF16)};
  const double norm = clip_norm(params, 1e9);
  EXPECT_NEAR(norm, 60000 * std::sqrt(2.0), 1);
}

TEST(ClipGradNormTest, HalfGradientsAreScaledInF32AndRoundedOnce) {
  // |(3, 4)| = 5; each gradient becomes f16(f32(g) * f32(1 / (5 + 1e-6))).
  std::vector<Variable> params = {with_grad({3, 4}, DType::kF16)};
  clip_norm(params, 1);
  const float coef = static_cast<float>(1.0 / (5 + 1e-6));
  const std::vector<double> expected =
      to_vector<double>(to(to(from_vector<float>({3 * coef, 4 * coef}, {2}), DType::kF16), DType::kF64));
  EXPECT_EQ(grad_of(params[0]), expected);
}

TEST(ClipGradNormTest, ParametersWithoutGradientsAreSkipped) {
  Variable no_grad(zeros({3}), true);
  std::vector<Variable> params = {no_grad, with_grad({3, 4})};
  EXPECT_NEAR(clip_norm(params, 100), 5, 1e-12);
  EXPECT_EQ(clip_norm(std::vector<Variable>{no_grad}, 1), 0);
  // An empty gradient adds nothing, as torch's vector_norm of it is 0.
  Variable empty(zeros({0}), true);
  empty.set_grad(zeros({0}));
  std::vector<Variable> with_empty = {empty, with_grad({3, 4})};
  EXPECT_NEAR(clip_norm(with_empty, 100), 5, 1e-12);
  EXPECT_EQ(clip_norm(std::vector<Variable>{empty}, 1), 0);
}

TEST(ClipGradNormTest, NonFiniteNorms) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Variable> params = {with_grad({1, inf})};
  expect_throws(absl::StatusCode::kInvalidArgument, {"clip_grad_norm_", "inf"},
                [&] { clip_grad_norm_(params, 1, 2, /*error_if_nonfinite=*/true); });
  EXPECT_EQ(grad_of(params[0])[0], 1);  // the error changed nothing
  // As torch 2.15: an infinite norm scales by 0 (inf * 0 is NaN); a NaN one
  // makes every gradient NaN, those of other tensors too.
  EXPECT_EQ(clip_norm(params, 1), inf);
  EXPECT_EQ(grad_of(params[0])[0], 0);
  EXPECT_TRUE(std::isnan(grad_of(params[0])[1]));
  std::vector<Variable> nan_params = {with_grad({1, std::nan("")}), with_grad({3, 4})};
  EXPECT_TRUE(std::isnan(clip_norm(nan_params, 1)));
  for (const Variable& v : nan_params) {
    for (const double g : grad_of(v)) EXPECT_TRUE(std::isnan(g));
  }
}

TEST(ClipGradNormTest, InvalidArgumentsAreErrors) {
  std::vector<Variable> params = {with_grad({1})};
  expect_throws(absl::StatusCode::kInvalidArgument, {"norm_type"}, [&] { clip_grad_norm_(params, 1, 0); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"max_norm"}, [&] { clip_grad_norm_(params, -1); });
}

TEST(ClipGradNormTest, CudaGradientsMatchTheCpu) {
  TS_SKIP_WITHOUT_CUDA();
  std::vector<Variable> cpu = {with_grad({3, 4}, DType::kF32), with_grad({12}, DType::kF32)};
  std::vector<Variable> gpu;
  for (const Variable& v : cpu) {
    Variable g(to(v.data(), Device::cuda(0)), true);
    g.set_grad(to(v.grad(), Device::cuda(0)));
    gpu.push_back(g);
  }
  const double cpu_norm = clip_norm(cpu, 6.5);
  const Tensor gpu_total = clip_grad_norm_(gpu, 6.5);
  EXPECT_EQ(gpu_total.device(), Device::cuda(0));  // left there: nothing is read back
  const double gpu_norm = item<double>(gpu_total);
  EXPECT_NEAR(gpu_norm, cpu_norm, 1e-5);
  for (size_t i = 0; i < cpu.size(); ++i) {
    const std::vector<double> a = grad_of(cpu[i]), b = grad_of(gpu[i]);
    for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(b[j], a[j], 1e-5);
  }
}

}  // namespace
}  // namespace ts::optim
