// batch_norm against a float64 reference (training: batch statistics and the
// running-stat update; eval: running statistics), hand-computed running
// statistics, gradcheck in both modes, errors, and CUDA against CPU.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/functional.h"
#include "nn/functional/batch_norm_relu.h"
#include "nn/functional/kernels.h"
#include "tests/nn/functional/layer_testing.h"
#include "tests/tensor/testing.h"

namespace ts::nn::functional {
namespace {

using autograd::Variable;
using ::ts::testing::random_tensor;
using ::ts::testing::Ref;
using ::ts::testing::ref_of;

// The reference: per channel, normalize with (mean, var), then scale/shift.
struct RefStats {
  std::vector<double> mean, var;  // biased variance
  int64_t count;
};

RefStats batch_stats(const Ref& x) {
  const int64_t n = x.shape[0], c = x.shape[1], plane = x.numel() / (n * c);
  RefStats s{std::vector<double>(c), std::vector<double>(c), n * plane};
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < plane; ++j) sum += x.v[(i * c + ch) * plane + j];
    s.mean[ch] = sum / s.count;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < plane; ++j) sq += std::pow(x.v[(i * c + ch) * plane + j] - s.mean[ch], 2);
    s.var[ch] = sq / s.count;
  }
  return s;
}

Ref normalize(const Ref& x, const std::vector<double>& mean, const std::vector<double>& var, const Ref* w, const Ref* b,
              double eps) {
  const int64_t n = x.shape[0], c = x.shape[1], plane = x.numel() / (n * c);
  Ref y = x;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < plane; ++j) {
        double& v = y.v[(i * c + ch) * plane + j];
        v = (v - mean[ch]) / std::sqrt(var[ch] + eps) * (w ? w->v[ch] : 1) + (b ? b->v[ch] : 0);
      }
  return y;
}

class BatchNormTest : public ts::testing::SeededTest {};

// With and without the affine parameters, and in each layout an input of
// `shape` can take (channels-last for 4-D and 5-D ones).
std::vector<std::pair<bool, MemoryFormat>> variants(const Shape& shape) {
  std::vector<std::pair<bool, MemoryFormat>> out;
  for (const bool affine : {true, false}) {
    out.emplace_back(affine, MemoryFormat::kContiguous);
    if (shape.size() == 4 || shape.size() == 5) out.emplace_back(affine, MemoryFormat::kChannelsLast);
  }
  return out;
}

TEST_F(BatchNormTest, TrainingMatchesReferenceAndUpdatesRunningStats) {
  const std::vector<Shape> shapes = {{4, 3, 5, 6}, {1, 2, 3, 3}, {7, 5}, {2, 3, 4}, {3, 2, 2, 3, 2}};
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    for (const Shape& shape : shapes) {
      for (const auto& [affine, format] : variants(shape)) {
        SCOPED_TRACE(
            absl::StrCat(shape_str(shape), dtype_name(dtype), affine ? " affine " : " ", memory_format_name(format)));
        const int64_t c = shape[1];
        const Tensor x = contiguous(random_tensor(rng(), shape, dtype, -2, 3), format);
        const Tensor w = random_tensor(rng(), {c}, dtype), b = random_tensor(rng(), {c}, dtype);
        const Tensor rm = random_tensor(rng(), {c}, dtype), rv = random_tensor(rng(), {c}, dtype, 0.5, 2);
        const Ref rm0 = ref_of(rm), rv0 = ref_of(rv);
        const double momentum = 0.3, eps = 1e-3;
        const Variable y = batch_norm(Variable(x), rm, rv, affine ? Variable(w) : Variable(),
                                      affine ? Variable(b) : Variable(), true, momentum, eps);
        const Ref xr = ref_of(x), wr = ref_of(w), br = ref_of(b);
        const RefStats s = batch_stats(xr);
        const double tol = ts::testing::tolerance(dtype);
        ts::testing::expect_close(
            y.data(), normalize(xr, s.mean, s.var, affine ? &wr : nullptr, affine ? &br : nullptr, eps), tol, 1.0);
        EXPECT_TRUE(y.data().is_contiguous(format));
        Ref want_rm = rm0, want_rv = rv0;
        for (int64_t ch = 0; ch < c; ++ch) {
          want_rm.v[ch] = (1 - momentum) * rm0.v[ch] + momentum * s.mean[ch];
          want_rv.v[ch] = (1 - momentum) * rv0.v[ch] + momentum * s.var[ch] * s.count / (s.count - 1);
        }
        ts::testing::expect_close(rm, want_rm, tol, 1.0, "running_mean");
        ts::testing::expect_close(rv, want_rv, tol, 1.0, "running_var");
      }
    }
  }
}

TEST_F(BatchNormTest, RunningStatsByHand) {
  // One channel holding 1, 2, 3, 4: mean 2.5, unbiased variance 5/3.
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 1, 2, 1});
  const Tensor rm = zeros({1}), rv = ones({1});
  batch_norm(Variable(x), rm, rv, Variable(), Variable(), true, 0.1, 1e-5);
  EXPECT_NEAR(item<double>(rm), 0.25, 1e-7);
  EXPECT_NEAR(item<double>(rv), 0.9 + 0.1 * 5.0 / 3.0, 1e-7);
  // A second step moves them again from there.
  batch_norm(Variable(x), rm, rv, Variable(), Variable(), true, 0.1, 1e-5);
  EXPECT_NEAR(item<double>(rm), 0.9 * 0.25 + 0.25, 1e-7);
}

TEST_F(BatchNormTest, RunningStatsInAnotherDtypeAreUpdated) {
  const Tensor x = random_tensor(rng(), {4, 2, 3, 3}, DType::kF32);
  const Tensor rm = zeros({2}, {DType::kF64}), rv = ones({2}, {DType::kF64});
  batch_norm(Variable(x), rm, rv, Variable(), Variable(), true, 1.0, 1e-5);
  const RefStats s = batch_stats(ref_of(x));
  EXPECT_NEAR(to_vector<double>(rm)[1], s.mean[1], 1e-6);
}

TEST_F(BatchNormTest, EvalUsesRunningStats) {
  for (const DType dtype : {DType::kF32, DType::kF64, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = random_tensor(rng(), {3, 4, 5, 2}, dtype, -2, 2);
    const Tensor w = random_tensor(rng(), {4}, dtype), b = random_tensor(rng(), {4}, dtype);
    const Tensor rm = random_tensor(rng(), {4}, dtype), rv = random_tensor(rng(), {4}, dtype, 0.5, 2);
    const Ref rm0 = ref_of(rm);
    const Variable y = batch_norm(Variable(x), rm, rv, Variable(w), Variable(b), false, 0.1, 1e-5);
    const Ref wr = ref_of(w), br = ref_of(b);
    ts::testing::expect_close(y.data(), normalize(ref_of(x), rm0.v, ref_of(rv).v, &wr, &br, 1e-5),
                              ts::testing::tolerance(dtype), 1.0);
    ts::testing::expect_close(rm, rm0, 0, 1.0, "running_mean must not change in eval");
  }
}

TEST_F(BatchNormTest, Gradcheck) {
  for (const bool training : {true, false}) {
    for (const Shape& shape : std::vector<Shape>{{3, 2, 3, 2}, {5, 3}}) {
      SCOPED_TRACE(absl::StrCat(training ? "training " : "eval ", shape_str(shape)));
      const int64_t c = shape[1];
      const Tensor rm = random_tensor(rng(), {c}, DType::kF64);
      const Tensor rv = random_tensor(rng(), {c}, DType::kF64, 0.5, 2);
      for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
        if (format == MemoryFormat::kChannelsLast && shape.size() != 4) continue;
        SCOPED_TRACE(memory_format_name(format));
        EXPECT_OK(autograd::gradcheck(
            [&](const std::vector<Variable>& v) {
              // Fresh copies: each evaluation would otherwise move the stats.
              return batch_norm(v[0], clone(rm), clone(rv), v[1], v[2], training, 0.1, 1e-5);
            },
            {contiguous(random_tensor(rng(), shape, DType::kF64), format), random_tensor(rng(), {c}, DType::kF64),
             random_tensor(rng(), {c}, DType::kF64)}));
      }
      EXPECT_OK(autograd::gradcheck(
          [&](const std::vector<Variable>& v) {
            return batch_norm(v[0], clone(rm), clone(rv), Variable(), Variable(), training, 0.1, 1e-5);
          },
          {random_tensor(rng(), shape, DType::kF64)}));
    }
  }
}

// Activations far from zero relative to their spread (here 1000 +- 1): f32
// results must still be as exact as f32 allows, in training and in eval
// (running mean near the batch's), forward and backward.
TEST_F(BatchNormTest, Float32IsExactForValuesFarFromZero) {
  const Shape shape = {4, 3, 5, 6};
  const int64_t c = shape[1];
  for (const bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "eval");
    // Drawn in f32 so the f64 reference sees the same values.
    const std::vector<Tensor> inputs = {random_tensor(rng(), shape, DType::kF32, 999, 1001),
                                        random_tensor(rng(), {c}, DType::kF32, 0.5, 2),
                                        random_tensor(rng(), {c}, DType::kF32)};
    const Tensor rm = random_tensor(rng(), {c}, DType::kF32, 999.5, 1000.5);
    const Tensor rv = random_tensor(rng(), {c}, DType::kF32, 0.2, 0.5);
    const nn::testing::LayerFn fn = [&](const std::vector<Variable>& v) {
      const DType dtype = v[0].dtype();
      return batch_norm(v[0], to(rm, dtype), to(rv, dtype), v[1], v[2], training, 0.1, 1e-5);
    };
    const Tensor grad_out = random_tensor(rng(), shape, DType::kF64);
    for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
      SCOPED_TRACE(memory_format_name(format));
      nn::testing::expect_matches_f64(fn, inputs, grad_out, DType::kF32, Device::cpu(),
                                      ts::testing::tolerance(DType::kF32), format);
    }
  }
}

// Channels-last sums chunks of 64 rows (pixels), the channels as vector
// lanes: 3 x 7 x 5 = 105 rows make a full chunk and a partial one, and 37
// channels leave a vector tail. Output and gradients in f32 and f64 against
// the row-major f64 path.
TEST_F(BatchNormTest, ChannelsLastMatchesRowMajor) {
  const Shape shape = {3, 37, 7, 5};
  for (const bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "eval");
    const std::vector<Tensor> inputs = {random_tensor(rng(), shape, DType::kF64, -2, 3),
                                        random_tensor(rng(), {37}, DType::kF64, 0.5, 2),
                                        random_tensor(rng(), {37}, DType::kF64)};
    const Tensor rm = random_tensor(rng(), {37}, DType::kF64), rv = random_tensor(rng(), {37}, DType::kF64, 0.5, 2);
    const nn::testing::LayerFn fn = [&](const std::vector<Variable>& v) {
      const DType dtype = v[0].dtype();
      return batch_norm(v[0], to(rm, dtype), to(rv, dtype), v[1], v[2], training, 0.1, 1e-5);
    };
    const Tensor grad_out = random_tensor(rng(), shape, DType::kF64);
    for (const DType dtype : {DType::kF32, DType::kF64}) {
      SCOPED_TRACE(dtype_name(dtype));
      nn::testing::expect_matches_f64(fn, inputs, grad_out, dtype, Device::cpu(), dtype == DType::kF64 ? 1e-12 : 1e-5,
                                      MemoryFormat::kChannelsLast);
    }
  }
}

// The channel's mean 1e8 times its spread, in f64: the output and every
// gradient against a long double reference (shifted sums, x - mean formed
// exactly). Summing x plainly for the mean, or dw as sum(dy * x) - mean *
// sum(dy), loses all but about 7 digits here (2.4e-7 relative in dw, where
// PyTorch's CPU kernel gives 3.5e-8).
TEST_F(BatchNormTest, Float64IsExactForMeansFarAboveTheSpread) {
  const Shape shape = {4, 3, 5, 6};
  const int64_t n = shape[0], c = shape[1], plane = shape[2] * shape[3], count = n * plane;
  const Tensor x = random_tensor(rng(), shape, DType::kF64, 1e8 - 1, 1e8 + 1);
  const Tensor weight = random_tensor(rng(), {c}, DType::kF64, 0.5, 2);
  const Tensor dy = random_tensor(rng(), shape, DType::kF64);
  const double eps = 1e-5;
  for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
    SCOPED_TRACE(memory_format_name(format));
    const Variable vx(contiguous(x, format), true), vw(weight, true), vb(zeros({c}, {DType::kF64}), true);
    const Variable y = batch_norm(vx, zeros({c}, {DType::kF64}), ones({c}, {DType::kF64}), vw, vb, true, 0.1, eps);
    autograd::sum(y * Variable(dy)).backward();

    const std::vector<double> xs = to_vector<double>(x), ws = to_vector<double>(weight), gs = to_vector<double>(dy);
    const std::vector<double> ys = to_vector<double>(y.data()), dxs = to_vector<double>(vx.grad()),
                              dws = to_vector<double>(vw.grad());
    const auto at = [&](int64_t i, int64_t ch, int64_t j) { return (i * c + ch) * plane + j; };
    double y_err = 0, dx_err = 0, dw_err = 0, dw_max = 0;
    for (int64_t ch = 0; ch < c; ++ch) {
      // x - mean as (x - shift) - (mean - shift): x - shift is exact in double
      // (Sterbenz), and the rest is small, so long double holds it to ~1e-19.
      using L = long double;
      const double shift = xs[at(0, ch, 0)];
      L offsets = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < plane; ++j) offsets += xs[at(i, ch, j)] - shift;
      const L mean_offset = offsets / count;
      const auto centered = [&](int64_t k) { return static_cast<L>(xs[k] - shift) - mean_offset; };
      L sq = 0, sum_dy = 0, sum_dy_xmu = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < plane; ++j) {
          const L xmu = centered(at(i, ch, j));
          sq += xmu * xmu;
          sum_dy += gs[at(i, ch, j)];
          sum_dy_xmu += gs[at(i, ch, j)] * xmu;
        }
      const L invstd = 1 / std::sqrt(sq / count + eps);
      const L dw = sum_dy_xmu * invstd;
      dw_err = std::max(dw_err, static_cast<double>(std::fabs(dws[ch] - dw)));
      dw_max = std::max(dw_max, static_cast<double>(std::fabs(dw)));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < plane; ++j) {
          const int64_t k = at(i, ch, j);
          const L xhat = centered(k) * invstd;
          const L dx = ws[ch] * invstd * (gs[k] - sum_dy / count - xhat * sum_dy_xmu * invstd / count);
          y_err = std::max(y_err, static_cast<double>(std::fabs(ys[k] - ws[ch] * xhat)));
          dx_err = std::max(dx_err, static_cast<double>(std::fabs(dxs[k] - dx)));
        }
    }
    // Outputs and dx are O(1) and O(1e-2 .. 1); dw is O(sqrt(count)).
    EXPECT_LT(y_err, 1e-12);
    EXPECT_LT(dx_err, 1e-12);
    EXPECT_LT(dw_err / dw_max, 1e-12);
  }
}

TEST_F(BatchNormTest, BadInputsAreErrors) {
  using ts::testing::expect_throws;
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  const Tensor x = random_tensor(rng(), {2, 3, 4, 4}, DType::kF32);
  const Tensor c3 = ones({3}), c4 = ones({4});
  expect_throws(kInvalid, {"batch_norm", "weight", "f32[4]", "[2, 3, 4, 4]"},
                [&] { batch_norm(Variable(x), c3, c3, Variable(c4), Variable(), true); });
  expect_throws(kInvalid, {"batch_norm", "running_mean", "[3]"},
                [&] { batch_norm(Variable(x), c4, c3, Variable(), Variable(), true); });
  expect_throws(kInvalid, {"batch_norm", "eval", "running_mean"},
                [&] { batch_norm(Variable(x), Tensor(), Tensor(), Variable(), Variable(), false); });
  const Tensor single = random_tensor(rng(), {1, 3, 1, 1}, DType::kF32);
  expect_throws(kInvalid, {"batch_norm", "more than one value", "[1, 3, 1, 1]"},
                [&] { batch_norm(Variable(single), c3, c3, Variable(), Variable(), true); });
  expect_throws(kInvalid, {"batch_norm", "[N, C, ...]", "[3]"},
                [&] { batch_norm(Variable(ones({3})), c3, c3, Variable(), Variable(), true); });
  expect_throws(kInvalid, {"batch_norm", "eps"},
                [&] { batch_norm(Variable(x), c3, c3, Variable(), Variable(), true, 0.1, 0); });
  // No channels: an error, not a division by zero.
  expect_throws(kInvalid, {"batch_norm: empty input f32[2, 0, 4]"}, [&] {
    batch_norm(Variable(zeros({2, 0, 4})), Tensor(), Tensor(), Variable(), Variable(), true);
  });
}

TEST_F(BatchNormTest, TrainingWithoutRunningStats) {
  const Tensor x = random_tensor(rng(), {4, 2, 3}, DType::kF64);
  const Variable y = batch_norm(Variable(x), Tensor(), Tensor(), Variable(), Variable(), true);
  const RefStats s = batch_stats(ref_of(x));
  ts::testing::expect_close(y.data(), normalize(ref_of(x), s.mean, s.var, nullptr, nullptr, 1e-5), 1e-12, 1.0);
}

// f16 and bf16 on the CPU against float64 on the same values, as
// CudaMatchesCpu runs them on CUDA: training and eval, both memory formats.
TEST_F(BatchNormTest, ReducedFloatsOnCpuMatchFloat64) {
  for (const bool training : {true, false}) {
    for (const DType dtype : {DType::kF16, DType::kBF16}) {
      SCOPED_TRACE(absl::StrCat(training ? "training " : "eval ", dtype_name(dtype)));
      const Shape shape = {6, 5, 7, 9};
      const Tensor rm = random_tensor(rng(), {5}, DType::kF32), rv = random_tensor(rng(), {5}, DType::kF32, 0.5, 2);
      for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
        SCOPED_TRACE(memory_format_name(format));
        nn::testing::expect_matches_f64(
            [&](const std::vector<Variable>& v) {
              return batch_norm(v[0], clone(rm), clone(rv), v[1], v[2], training);
            },
            {random_tensor(rng(), shape, dtype, -2, 2), random_tensor(rng(), {5}, dtype),
             random_tensor(rng(), {5}, dtype)},
            random_tensor(rng(), shape, DType::kF64), dtype, Device::cpu(), ts::testing::tolerance(dtype), format);
      }
    }
  }
}

TEST_F(BatchNormTest, CudaMatchesCpu) {
  TS_SKIP_WITHOUT_CUDA();
  for (const bool training : {true, false}) {
    for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
      SCOPED_TRACE(absl::StrCat(training ? "training " : "eval ", dtype_name(dtype)));
      const Shape shape = {6, 5, 7, 9};
      const Tensor rm = random_tensor(rng(), {5}, DType::kF32), rv = random_tensor(rng(), {5}, DType::kF32, 0.5, 2);
      const DType pt = dtype == DType::kF64 ? DType::kF64 : DType::kF32;
      for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
        SCOPED_TRACE(memory_format_name(format));
        nn::testing::expect_cuda_matches_cpu(
            [&](const std::vector<Variable>& v) {
              // Running stats live on the input's device, in the parameter dtype.
              return batch_norm(v[0], to(to(rm, pt), v[0].device()), to(to(rv, pt), v[0].device()), v[1], v[2],
                                training);
            },
            {random_tensor(rng(), shape, dtype, -2, 2), random_tensor(rng(), {5}, dtype),
             random_tensor(rng(), {5}, dtype)},
            random_tensor(rng(), shape, DType::kF64), dtype,
            dtype == DType::kF64 ? 1e-10 : ts::testing::tolerance(dtype), format);
        if (!training) continue;
        // The running statistics cuDNN updates match the CPU's.
        const Tensor x = contiguous(random_tensor(rng(), shape, dtype, -2, 2), format);
        std::vector<Tensor> updated;
        for (const Device device : {Device::cpu(), Device::cuda(0)}) {
          const Tensor m = to(to(rm, pt), device);
          const Tensor var = to(to(rv, pt), device);
          batch_norm(Variable(to(x, device)), m, var, Variable(), Variable(), true, 0.2, 1e-5);
          updated.push_back(cat({m, var}, 0));
        }
        ts::testing::expect_close(updated[1], ref_of(updated[0]), 1e-5, 1.0, "running stats");
      }
    }
  }
}

TEST_F(BatchNormTest, BatchNormReluGradcheck) {
  const Shape shape = {3, 4, 3, 2};
  const Tensor rm = random_tensor(rng(), {4}, DType::kF64);
  const Tensor rv = random_tensor(rng(), {4}, DType::kF64, 0.5, 2);
  for (const bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "eval");
    EXPECT_OK(autograd::gradcheck(
        [&](const std::vector<Variable>& v) {
          return batch_norm_relu(v[0], v[1], clone(rm), clone(rv), v[2], v[3], training, 0.1, 1e-5);
        },
        {random_tensor(rng(), shape, DType::kF64), random_tensor(rng(), shape, DType::kF64),
         random_tensor(rng(), {4}, DType::kF64), random_tensor(rng(), {4}, DType::kF64)}));
    EXPECT_OK(autograd::gradcheck(
        [&](const std::vector<Variable>& v) {
          return batch_norm_relu(v[0], Variable(), clone(rm), clone(rv), v[1], v[2], training, 0.1, 1e-5);
        },
        {random_tensor(rng(), shape, DType::kF64), random_tensor(rng(), {4}, DType::kF64),
         random_tensor(rng(), {4}, DType::kF64)}));
  }
}

// The CPU's kernels, with a fused batch norm, add and ReLU built from them
// the way cuDNN's computes: the ReLU's gradient from the saved output.
class FusingCpuKernels final : public LayerKernels {
 public:
  void conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                    const Tensor& out) const override {
    cpu_kernels().conv_forward(g, x, weight, bias, out);
  }
  ConvLayouts conv_layouts(MemoryFormat input, DType dtype) const override {
    return cpu_kernels().conv_layouts(input, dtype);
  }
  void conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& grad_out,
                     const Tensor& grad_x, const Tensor& grad_weight) const override {
    cpu_kernels().conv_backward(g, x, weight, grad_out, grad_x, grad_weight);
  }
  Tensor batch_norm_forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                     const Tensor& running_mean, const Tensor& running_var, double momentum, double eps,
                                     const Tensor& y, const Tensor& save_mean,
                                     const Tensor& save_invstd) const override {
    return cpu_kernels().batch_norm_forward_training(x, weight, bias, running_mean, running_var, momentum, eps, y,
                                                     save_mean, save_invstd);
  }
  void batch_norm_backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                    const Tensor& save_mean, const Tensor& save_invstd, const Tensor& reserve,
                                    double eps, const Tensor& grad_x, const Tensor& grad_weight,
                                    const Tensor& grad_bias) const override {
    cpu_kernels().batch_norm_backward_training(x, grad_y, weight, save_mean, save_invstd, reserve, eps, grad_x,
                                               grad_weight, grad_bias);
  }
  bool fuses_batch_norm_relu(const Tensor&) const override { return true; }
  Tensor batch_norm_relu_forward_training(const Tensor& x, const Tensor& z, const Tensor& weight, const Tensor& bias,
                                          const Tensor& running_mean, const Tensor& running_var, double momentum,
                                          double eps, const Tensor& y, const Tensor& save_mean,
                                          const Tensor& save_invstd) const override {
    const Tensor reserve = batch_norm_forward_training(x, weight, bias, running_mean, running_var, momentum, eps, y,
                                                       save_mean, save_invstd);
    copy_(y, relu(z.defined() ? y + z : y));
    return reserve;
  }
  void batch_norm_relu_backward_training(const Tensor& x, const Tensor& y, const Tensor& grad_y, const Tensor& weight,
                                         const Tensor&, const Tensor& save_mean, const Tensor& save_invstd,
                                         const Tensor& reserve, double eps, const Tensor& grad_x, const Tensor& grad_z,
                                         const Tensor& grad_weight, const Tensor& grad_bias) const override {
    const Tensor through_relu = where(gt(y, 0.0), grad_y, 0.0);
    if (grad_z.defined()) copy_(grad_z, through_relu);
    batch_norm_backward_training(x, through_relu, weight, save_mean, save_invstd, reserve, eps, grad_x, grad_weight,
                                 grad_bias);
  }
  void max_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out,
                          const Tensor& indices) const override {
    cpu_kernels().max_pool2d_forward(g, x, out, indices);
  }
  void max_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& indices,
                           const Tensor& grad_x) const override {
    cpu_kernels().max_pool2d_backward(g, grad_out, indices, grad_x);
  }
  void avg_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out) const override {
    cpu_kernels().avg_pool2d_forward(g, x, out);
  }
  void avg_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& grad_x) const override {
    cpu_kernels().avg_pool2d_backward(g, grad_out, grad_x);
  }
};

// The fused frontend (what runs on cuDNN) through the CPU's kernels: the
// ops written out's values, running statistics and gradients of x, z,
// weight and bias in their places, and gradcheck.
TEST_F(BatchNormTest, FusedBatchNormReluFrontendMatchesTheOpsWrittenOut) {
  const FusingCpuKernels fusing;
  const Shape shape = {3, 4, 3, 2};
  for (const bool with_z : {true, false}) {
    SCOPED_TRACE(with_z ? "with z" : "without z");
    const Tensor x = random_tensor(rng(), shape, DType::kF64), z = random_tensor(rng(), shape, DType::kF64);
    const Tensor w = random_tensor(rng(), {4}, DType::kF64), b = random_tensor(rng(), {4}, DType::kF64);
    const Tensor grad_out = random_tensor(rng(), shape, DType::kF64);
    std::vector<std::vector<double>> results[2];
    for (const bool fused : {true, false}) {
      std::vector<Variable> v = {Variable(x, true), Variable(z, true), Variable(w, true), Variable(b, true)};
      const Tensor rm = zeros({4}, {DType::kF64}), rv = ones({4}, {DType::kF64});
      const Variable zv = with_z ? v[1] : Variable();
      const Variable y =
          fused ? batch_norm_internal::batch_norm_relu_fused(fusing, v[0], zv, rm, rv, v[2], v[3], 0.1, 1e-5)
                : batch_norm_relu(v[0], zv, rm, rv, v[2], v[3], /*training=*/true, 0.1, 1e-5);
      autograd::sum(y * Variable(grad_out)).backward();
      std::vector<std::vector<double>>& r = results[fused ? 0 : 1];
      for (const Tensor& t : {y.data(), rm, rv, v[0].grad(), v[2].grad(), v[3].grad()})
        r.push_back(to_vector<double>(t));
      EXPECT_EQ(v[1].grad().defined(), with_z);
      if (with_z) r.push_back(to_vector<double>(v[1].grad()));
    }
    ASSERT_EQ(results[0].size(), results[1].size());
    for (size_t i = 0; i < results[0].size(); ++i) {
      ASSERT_EQ(results[0][i].size(), results[1][i].size());
      for (size_t j = 0; j < results[0][i].size(); ++j) {
        EXPECT_NEAR(results[0][i][j], results[1][i][j], 1e-12 * (1 + std::abs(results[1][i][j])))
            << "result " << i << " element " << j;
      }
    }
  }
  EXPECT_OK(autograd::gradcheck(
      [&](const std::vector<Variable>& v) {
        return batch_norm_internal::batch_norm_relu_fused(fusing, v[0], v[1], zeros({4}, {DType::kF64}),
                                                          ones({4}, {DType::kF64}), v[2], v[3], 0.1, 1e-5);
      },
      {random_tensor(rng(), shape, DType::kF64), random_tensor(rng(), shape, DType::kF64),
       random_tensor(rng(), {4}, DType::kF64), random_tensor(rng(), {4}, DType::kF64)}));
}

// On CUDA, channels-last f16 in training runs cuDNN's fused kernels (the
// others compose the ops): values, all four gradients and the running
// statistics against the CPU's f64.
TEST_F(BatchNormTest, BatchNormReluCudaMatchesCpu) {
  TS_SKIP_WITHOUT_CUDA();
  const Shape shape = {6, 8, 7, 9};  // 8 channels: cuDNN's fused ops need a multiple of 4
  const Tensor rm = random_tensor(rng(), {8}, DType::kF32), rv = random_tensor(rng(), {8}, DType::kF32, 0.5, 2);
  for (const DType dtype : {DType::kF16, DType::kF32}) {
    for (const MemoryFormat format : {MemoryFormat::kChannelsLast, MemoryFormat::kContiguous}) {
      for (const bool with_z : {true, false}) {
        SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", memory_format_name(format), with_z ? " with z" : ""));
        std::vector<Tensor> inputs = {random_tensor(rng(), shape, dtype, -2, 2), random_tensor(rng(), {8}, dtype),
                                      random_tensor(rng(), {8}, dtype)};
        // The fused kernels are the ones under test where they apply.
        const bool fusable = dtype == DType::kF16 && format == MemoryFormat::kChannelsLast;
        EXPECT_EQ(
            kernels_for(Device::cuda(0)).fuses_batch_norm_relu(contiguous(to(inputs[0], Device::cuda(0)), format)),
            fusable);
        if (with_z) inputs.push_back(random_tensor(rng(), shape, dtype, -1, 1));
        nn::testing::expect_cuda_matches_cpu(
            [&](const std::vector<Variable>& v) {
              return batch_norm_relu(v[0], with_z ? v[3] : Variable(), to(rm, v[0].device()), to(rv, v[0].device()),
                                     v[1], v[2], /*training=*/true);
            },
            inputs, random_tensor(rng(), shape, DType::kF64), dtype, dtype == DType::kF16 ? 2e-2 : 1e-5, format);
        std::vector<Tensor> updated;
        const Tensor x = contiguous(inputs[0], format);
        const Tensor z = contiguous(random_tensor(rng(), shape, dtype), format);
        for (const Device device : {Device::cpu(), Device::cuda(0)}) {
          const Tensor m = to(rm, device), var = to(rv, device);
          batch_norm_relu(Variable(to(x, device)), with_z ? Variable(to(z, device)) : Variable(), m, var, Variable(),
                          Variable(), true, 0.2, 1e-5);
          updated.push_back(cat({m, var}, 0));
        }
        ts::testing::expect_close(updated[1], ref_of(updated[0]), 1e-5, 1.0, "running stats");
      }
    }
  }
  // A NaN makes its channel's statistics NaN, and the fused ReLU keeps it
  // (CUDNN_PROPAGATE_NAN), as the CPU's relu does: a loss scaler must see it.
  Tensor x = contiguous(random_tensor(rng(), shape, DType::kF16), MemoryFormat::kChannelsLast);
  fill_(x.select(0, 2).select(0, 3).select(0, 4).select(0, 5), std::nan(""));
  const Tensor y = batch_norm_relu(Variable(to(x, Device::cuda(0))), Variable(), Tensor(), Tensor(), Variable(),
                                   Variable(), /*training=*/true)
                       .data();
  const Tensor nan_per_channel = sum(to(isnan(to(y, Device::cpu())), DType::kI64), {0, 2, 3});
  std::vector<int64_t> expected(8, 0);
  expected[3] = 6 * 7 * 9;
  EXPECT_EQ(to_vector<int64_t>(nan_per_channel), expected);
}

}  // namespace
}  // namespace ts::nn::functional
