// conv2d against a naive float64 convolution on fresh random inputs (groups,
// stride, padding, dilation, odd sizes, batch 1, the 1x1 GEMM path, chunked
// batches), f32 on both CPU paths (oneDNN and the im2col + OpenBLAS
// reference), gradcheck of its backward, error messages, and CUDA against CPU.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/gradcheck.h"
#include "gtest/gtest.h"
#include "nn/functional.h"
#include "nn/functional/cpu_reference_path.h"
#include "tests/nn/functional/layer_testing.h"
#include "tests/tensor/testing.h"

namespace ts::nn::functional {
namespace {

using autograd::Variable;
using ::ts::testing::random_tensor;
using ::ts::testing::Ref;
using ::ts::testing::ref_of;

struct Case {
  std::string name;
  Shape x, w;
  Conv2dOptions options;
  bool bias;
};

std::vector<Case> cases() {
  return {
      {"3x3 pad 1", {2, 3, 8, 8}, {4, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}, true},
      {"batch 1, odd sizes, no bias", {1, 5, 7, 9}, {3, 5, 3, 3}, {{1, 1}, {0, 0}, {1, 1}, 1}, false},
      {"stride 2", {3, 4, 9, 8}, {6, 4, 3, 3}, {{2, 2}, {1, 1}, {1, 1}, 1}, true},
      {"asymmetric stride, padding, kernel", {2, 3, 10, 7}, {5, 3, 3, 2}, {{2, 1}, {2, 0}, {1, 1}, 1}, true},
      {"dilation", {2, 2, 11, 10}, {3, 2, 3, 3}, {{1, 1}, {2, 1}, {2, 3}, 1}, true},
      {"groups", {2, 6, 7, 7}, {9, 2, 3, 3}, {{1, 2}, {1, 1}, {1, 1}, 3}, true},
      {"depthwise", {2, 4, 6, 5}, {4, 1, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 4}, false},
      {"1x1 (plain GEMM)", {3, 8, 5, 6}, {5, 8, 1, 1}, {{1, 1}, {0, 0}, {1, 1}, 1}, true},
      {"1x1 grouped", {2, 8, 5, 3}, {6, 4, 1, 1}, {{1, 1}, {0, 0}, {1, 1}, 2}, true},
      {"1x1 stride 2 (im2col)", {2, 4, 7, 7}, {6, 4, 1, 1}, {{2, 2}, {0, 0}, {1, 1}, 1}, false},
      {"kernel as large as the padded input", {2, 2, 3, 4}, {3, 2, 5, 4}, {{1, 1}, {1, 0}, {1, 1}, 1}, true},
      // 40 images of 64 x 9 taps x 256 positions exceed one im2col chunk.
      {"chunked batch", {40, 64, 16, 16}, {8, 64, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}, true},
  };
}

// out[n, o, i, j] = b[o] + sum over the group's channels and taps.
Ref reference(const Ref& x, const Ref& w, const Ref* b, const Conv2dOptions& o) {
  // Input channels come from the weight's group width (cg) and the groups.
  const int64_t n = x.shape[0], h = x.shape[2], wd = x.shape[3];
  const int64_t co = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t oh = (h + 2 * o.padding[0] - o.dilation[0] * (kh - 1) - 1) / o.stride[0] + 1;
  const int64_t ow = (wd + 2 * o.padding[1] - o.dilation[1] * (kw - 1) - 1) / o.stride[1] + 1;
  const int64_t cog = co / o.groups;
  Ref out{{n, co, oh, ow}, std::vector<double>(n * co * oh * ow)};
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oc = 0; oc < co; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = b != nullptr ? b->v[oc] : 0;
          const int64_t g = oc / cog;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t ki = 0; ki < kh; ++ki)
              for (int64_t kj = 0; kj < kw; ++kj) {
                const int64_t y = i * o.stride[0] - o.padding[0] + ki * o.dilation[0];
                const int64_t z = j * o.stride[1] - o.padding[1] + kj * o.dilation[1];
                if (y < 0 || y >= h || z < 0 || z >= wd) continue;
                sum += x.v[x.index({in, g * cg + ic, y, z})] * w.v[w.index({oc, ic, ki, kj})];
              }
          out.v[out.index({in, oc, i, j})] = sum;
        }
  return out;
}

class Conv2dTest : public ts::testing::SeededTest {};

// The f32 checks run once per CPU path: oneDNN (the default) and the
// reference kernels (TS_CPU_REFERENCE=1), each against f64. f64 itself always
// takes the reference path.
class Conv2dCpuPathTest : public ts::testing::SeededTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    reference_before_ = cpu_reference_path();
    set_cpu_reference_path(GetParam());
  }
  void TearDown() override { set_cpu_reference_path(reference_before_); }

 private:
  bool reference_before_ = false;
};

INSTANTIATE_TEST_SUITE_P(Paths, Conv2dCpuPathTest, ::testing::Bool(), [](const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Reference" : "OneDnn";
});

TEST_P(Conv2dCpuPathTest, ForwardMatchesFloat64Reference) {
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    for (const Case& c : cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(dtype)));
      const Tensor x = random_tensor(rng(), c.x, dtype);
      const Tensor w = random_tensor(rng(), c.w, dtype);
      const Tensor b = c.bias ? random_tensor(rng(), {c.w[0]}, dtype) : Tensor();
      const Variable out = conv2d(Variable(x), Variable(w), b.defined() ? Variable(b) : Variable(), c.options);
      const Ref bref = c.bias ? ref_of(b) : Ref{};
      const Ref want = reference(ref_of(x), ref_of(w), c.bias ? &bref : nullptr, c.options);
      // Rounding grows with the number of summands (|x|, |w| <= 1): compare
      // relative to the sum of their magnitudes.
      const double summands = static_cast<double>(c.w[1] * c.w[2] * c.w[3]) + 1;
      ts::testing::expect_close(out.data(), want, ts::testing::tolerance(dtype), summands / 4);
    }
  }
}

// The f32 backward runs other kernels (oneDNN's, or the reference's GEMMs
// with transposed operands and accumulation across chunks) than the f64 one
// gradcheck covers: its gradients must match the f64 path's (itself
// gradchecked) on the same inputs, within f32 rounding.
TEST_P(Conv2dCpuPathTest, Float32BackwardMatchesFloat64) {
  std::vector<Case> all = cases();
  // ResNet-20's stage-2 convolution on a batch of 8 (two im2col chunks).
  all.push_back({"resnet20 stage 2", {8, 32, 16, 16}, {32, 32, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}, false});
  for (const Case& c : all) {
    SCOPED_TRACE(c.name);
    const std::vector<Tensor> inputs = {random_tensor(rng(), c.x, DType::kF64), random_tensor(rng(), c.w, DType::kF64),
                                        c.bias ? random_tensor(rng(), {c.w[0]}, DType::kF64) : Tensor()};
    const Conv2dOptions options = c.options;
    const nn::testing::LayerFn fn = [options](const std::vector<Variable>& v) {
      return conv2d(v[0], v[1], v[2], options);
    };
    const Tensor probe = fn({Variable(inputs[0]), Variable(inputs[1]), Variable()}).data();
    const Tensor grad_out = random_tensor(rng(), probe.shape(), DType::kF64);
    nn::testing::expect_matches_f64(fn, inputs, grad_out, DType::kF32, Device::cpu(), 1e-5);
  }
}

TEST_F(Conv2dTest, ReducedFloatsOnCpuComputeInF32) {
  const Tensor x = random_tensor(rng(), {2, 3, 6, 6}, DType::kBF16);
  const Tensor w = random_tensor(rng(), {4, 3, 3, 3}, DType::kBF16);
  const Variable out = conv2d(Variable(x), Variable(w), Variable(), {{1, 1}, {1, 1}});
  EXPECT_EQ(out.dtype(), DType::kBF16);
  const Ref want = reference(ref_of(x), ref_of(w), nullptr, {{1, 1}, {1, 1}});
  ts::testing::expect_close(out.data(), want, ts::testing::tolerance(DType::kBF16), 27.0 / 4);
}

TEST_F(Conv2dTest, Gradcheck) {
  const std::vector<Case> small = {
      {"3x3 pad 1", {2, 3, 5, 4}, {2, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}, true},
      {"stride, dilation, asymmetric", {1, 2, 7, 6}, {3, 2, 2, 3}, {{2, 1}, {1, 2}, {2, 1}, 1}, true},
      {"groups", {2, 4, 4, 4}, {6, 2, 3, 1}, {{1, 2}, {0, 1}, {1, 1}, 2}, true},
      {"1x1", {2, 3, 3, 2}, {2, 3, 1, 1}, {{1, 1}, {0, 0}, {1, 1}, 1}, false},
  };
  for (const Case& c : small) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> inputs = {random_tensor(rng(), c.x, DType::kF64), random_tensor(rng(), c.w, DType::kF64)};
    if (c.bias) inputs.push_back(random_tensor(rng(), {c.w[0]}, DType::kF64));
    const Conv2dOptions options = c.options;
    EXPECT_OK(autograd::gradcheck(
        [options](const std::vector<Variable>& v) {
          return conv2d(v[0], v[1], v.size() > 2 ? v[2] : Variable(), options);
        },
        inputs));
  }
}

TEST_F(Conv2dTest, OnlyRequestedGradientsAreComputed) {
  const Variable x(random_tensor(rng(), {2, 3, 5, 5}, DType::kF32), false);
  const Variable w(random_tensor(rng(), {4, 3, 3, 3}, DType::kF32), true);
  const Variable out = conv2d(x, w, Variable(), {});
  out.backward(ones(out.shape()));
  EXPECT_FALSE(x.grad().defined());
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().shape(), w.shape());
}

TEST_F(Conv2dTest, BadInputsAreErrorsNamingTheShapes) {
  auto expect_rejected = [&](Shape xs, Shape ws, Conv2dOptions o, Shape bs, const std::vector<std::string>& fragments) {
    const Variable x(random_tensor(rng(), xs, DType::kF32));
    const Variable w(random_tensor(rng(), ws, DType::kF32));
    const Variable b = bs.empty() ? Variable() : Variable(random_tensor(rng(), bs, DType::kF32));
    ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, fragments, [&] { conv2d(x, w, b, o); });
  };
  expect_rejected({2, 3, 8, 8}, {4, 5, 3, 3}, {}, {}, {"conv2d", "3 channels", "[2, 3, 8, 8]", "[4, 5, 3, 3]"});
  expect_rejected({2, 6, 8, 8}, {4, 3, 3, 3}, {.groups = 4}, {}, {"conv2d", "groups 4", "[2, 6, 8, 8]"});
  expect_rejected({2, 6, 8, 8}, {5, 3, 3, 3}, {.groups = 2}, {}, {"conv2d", "groups 2", "[5, 3, 3, 3]"});
  expect_rejected({1, 2, 3, 3}, {1, 2, 5, 5}, {}, {}, {"conv2d", "larger than the padded input", "[1, 2, 3, 3]"});
  expect_rejected({1, 2, 3, 3}, {1, 2, 3, 3}, {.dilation = {2, 2}}, {}, {"conv2d", "5x5"});
  expect_rejected({2, 3, 8}, {4, 3, 3, 3}, {}, {}, {"conv2d", "4-D", "[2, 3, 8]"});
  expect_rejected({2, 3, 8, 8}, {4, 3, 3}, {}, {}, {"conv2d", "weight", "[4, 3, 3]"});
  expect_rejected({2, 3, 8, 8}, {4, 3, 3, 3}, {.stride = {0, 1}}, {}, {"conv2d", "stride"});
  expect_rejected({2, 3, 8, 8}, {4, 3, 3, 3}, {}, {5}, {"conv2d", "bias", "[5]"});
  const Variable x(random_tensor(rng(), {1, 1, 3, 3}, DType::kF32));
  const Variable w(random_tensor(rng(), {1, 1, 3, 3}, DType::kF64));
  ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"conv2d", "dtypes", "f64[1, 1, 3, 3]"},
                             [&] { conv2d(x, w, Variable(), {}); });
}

TEST_F(Conv2dTest, CudaMatchesCpu) {
  TS_SKIP_WITHOUT_CUDA();
  for (const Case& c : cases()) {
    for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(dtype)));
      std::vector<Tensor> inputs = {random_tensor(rng(), c.x, dtype), random_tensor(rng(), c.w, dtype),
                                    c.bias ? random_tensor(rng(), {c.w[0]}, dtype) : Tensor()};
      const Conv2dOptions options = c.options;
      const Tensor probe = conv2d(Variable(inputs[0]), Variable(inputs[1]), Variable(), options).data();
      const Tensor grad_out = random_tensor(rng(), probe.shape(), DType::kF64);
      nn::testing::expect_cuda_matches_cpu(
          [options](const std::vector<Variable>& v) { return conv2d(v[0], v[1], v[2], options); }, inputs, grad_out,
          dtype,
          dtype == DType::kF64      ? 1e-10
          : is_reduced_float(dtype) ? 2e-2
                                    : 1e-5);
    }
  }
}

}  // namespace
}  // namespace ts::nn::functional
