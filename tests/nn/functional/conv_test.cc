// conv2d and conv3d against a naive float64 convolution on fresh random
// inputs (groups, stride, padding, dilation, odd sizes, batch 1, the 1x1 GEMM
// path, chunked batches), f32 on both CPU paths (oneDNN and the im2col +
// OpenBLAS reference), gradcheck of the backward, error messages, and CUDA
// against CPU.
#include <cmath>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/gradcheck.h"
#include "gtest/gtest.h"
#include "nn/functional.h"
#include "nn/functional/cpu_reference_path.h"
#include "tensor/precision.h"
#include "tests/nn/functional/layer_testing.h"
#include "tests/tensor/testing.h"

namespace ts::nn::functional {
namespace {

using autograd::Variable;
using ::ts::testing::random_tensor;
using ::ts::testing::Ref;
using ::ts::testing::ref_of;

template <int N>
struct Case {
  std::string name;
  Shape x, w;
  ConvOptions<N> options;
  bool bias;
};

std::vector<Case<2>> cases_2d() {
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

// The U-Net's shapes in small (3x3x3 pad 1, 2x2x2 stride 2) and the
// irregular ones.
std::vector<Case<3>> cases_3d() {
  return {
      {"3x3x3 pad 1", {2, 3, 6, 5, 4}, {4, 3, 3, 3, 3}, {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1}, true},
      {"2x2x2 stride 2, no bias", {1, 4, 6, 6, 4}, {5, 4, 2, 2, 2}, {{2, 2, 2}, {0, 0, 0}, {1, 1, 1}, 1}, false},
      {"asymmetric stride, padding, dilation",
       {2, 2, 7, 6, 9},
       {3, 2, 2, 3, 2},
       {{2, 1, 3}, {1, 0, 2}, {2, 1, 1}, 1},
       true},
      {"groups", {2, 6, 4, 5, 3}, {9, 2, 3, 1, 3}, {{1, 2, 1}, {1, 1, 1}, {1, 1, 1}, 3}, true},
      {"depthwise", {1, 4, 5, 4, 4}, {4, 1, 3, 3, 3}, {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 4}, false},
      {"1x1x1 (plain GEMM)", {2, 8, 3, 4, 5}, {5, 8, 1, 1, 1}, {{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 1}, true},
  };
}

// Calls `fn` on every case of both ranks.
template <typename Fn>
void for_each_case(Fn fn) {
  for (const Case<2>& c : cases_2d()) fn(c);
  for (const Case<3>& c : cases_3d()) fn(c);
}

template <int N>
Variable conv(const Variable& x, const Variable& w, const Variable& b, const ConvOptions<N>& options) {
  if constexpr (N == 2) {
    return conv2d(x, w, b, options);
  } else {
    return conv3d(x, w, b, options);
  }
}

// out[n, o, z, i, j] = b[o] + sum over the group's channels and taps, in 3-D;
// a 2-D case is computed as one of depth 1.
template <int N>
Ref reference(const Ref& x, const Ref& w, const Ref* b, const ConvOptions<N>& o) {
  const auto dim = [](const Shape& s, int spatial) { return N == 3 || spatial > 0 ? s[2 + spatial - (3 - N)] : 1; };
  // Spatial dim k of a 2-D option is k - 1 (depth has stride 1, padding 0).
  const auto opt = [](const std::array<int64_t, N>& a, int spatial, int64_t depth) {
    return N == 3 ? a[spatial] : spatial == 0 ? depth : a[spatial - 1];
  };
  const int64_t n = x.shape[0], co = w.shape[0], cg = w.shape[1], cog = co / o.groups;
  int64_t in[3], k[3], out[3], st[3], pad[3], dil[3];
  for (int s = 0; s < 3; ++s) {
    in[s] = dim(x.shape, s), k[s] = dim(w.shape, s);
    st[s] = opt(o.stride, s, 1), pad[s] = opt(o.padding, s, 0), dil[s] = opt(o.dilation, s, 1);
    out[s] = (in[s] + 2 * pad[s] - dil[s] * (k[s] - 1) - 1) / st[s] + 1;
  }
  Shape out_shape = {n, co, out[0], out[1], out[2]};
  if (N == 2) out_shape.erase(out_shape.begin() + 2);
  Ref result{out_shape, std::vector<double>(n * co * out[0] * out[1] * out[2])};
  int64_t at = 0;  // row-major over [n, co, out...]
  for (int64_t in_n = 0; in_n < n; ++in_n)
    for (int64_t oc = 0; oc < co; ++oc)
      for (int64_t oz = 0; oz < out[0]; ++oz)
        for (int64_t oi = 0; oi < out[1]; ++oi)
          for (int64_t oj = 0; oj < out[2]; ++oj) {
            double sum = b != nullptr ? b->v[oc] : 0;
            const int64_t g = oc / cog;
            for (int64_t ic = 0; ic < cg; ++ic)
              for (int64_t kz = 0; kz < k[0]; ++kz)
                for (int64_t ki = 0; ki < k[1]; ++ki)
                  for (int64_t kj = 0; kj < k[2]; ++kj) {
                    const int64_t z = oz * st[0] - pad[0] + kz * dil[0];
                    const int64_t y = oi * st[1] - pad[1] + ki * dil[1];
                    const int64_t xx = oj * st[2] - pad[2] + kj * dil[2];
                    if (z < 0 || z >= in[0] || y < 0 || y >= in[1] || xx < 0 || xx >= in[2]) continue;
                    const int64_t xi = (((in_n * x.shape[1] + g * cg + ic) * in[0] + z) * in[1] + y) * in[2] + xx;
                    const int64_t wi = (((oc * cg + ic) * k[0] + kz) * k[1] + ki) * k[2] + kj;
                    sum += x.v[xi] * w.v[wi];
                  }
            result.v[at++] = sum;
          }
  return result;
}

// Taps per output element: the summands of one dot product.
int64_t taps(const Shape& w) {
  int64_t taps = 1;
  for (size_t i = 1; i < w.size(); ++i) taps *= w[i];
  return taps;
}

class ConvTest : public ts::testing::SeededTest {};

// The f32 checks run once per CPU path: oneDNN (the default) and the
// reference kernels (TS_CPU_REFERENCE=1), each against f64. f64 itself always
// takes the reference path.
class ConvCpuPathTest : public ts::testing::SeededTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    reference_before_ = cpu_reference_path();
    set_cpu_reference_path(GetParam());
  }
  void TearDown() override { set_cpu_reference_path(reference_before_); }

 private:
  bool reference_before_ = false;
};

INSTANTIATE_TEST_SUITE_P(Paths, ConvCpuPathTest, ::testing::Bool(), [](const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Reference" : "OneDnn";
});

TEST_P(ConvCpuPathTest, ForwardMatchesFloat64Reference) {
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    for_each_case([&](const auto& c) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", c.x.size() - 2, "-D ", dtype_name(dtype)));
      const Tensor x = random_tensor(rng(), c.x, dtype);
      const Tensor w = random_tensor(rng(), c.w, dtype);
      const Tensor b = c.bias ? random_tensor(rng(), {c.w[0]}, dtype) : Tensor();
      const Variable out = conv(Variable(x), Variable(w), b.defined() ? Variable(b) : Variable(), c.options);
      const Ref bref = c.bias ? ref_of(b) : Ref{};
      const Ref want = reference(ref_of(x), ref_of(w), c.bias ? &bref : nullptr, c.options);
      // Rounding grows with the number of summands (|x|, |w| <= 1): compare
      // relative to the sum of their magnitudes.
      const double summands = static_cast<double>(taps(c.w)) + 1;
      ts::testing::expect_close(out.data(), want, ts::testing::tolerance(dtype), summands / 4);
    });
  }
}

// The f32 backward runs other kernels (oneDNN's, or the reference's GEMMs
// with transposed operands and accumulation across chunks) than the f64 one
// gradcheck covers: its gradients must match the f64 path's (itself
// gradchecked) on the same inputs, within f32 rounding.
TEST_P(ConvCpuPathTest, Float32BackwardMatchesFloat64) {
  const auto check = [&](const auto& c) {
    SCOPED_TRACE(absl::StrCat(c.name, " ", c.x.size() - 2, "-D"));
    const std::vector<Tensor> inputs = {random_tensor(rng(), c.x, DType::kF64), random_tensor(rng(), c.w, DType::kF64),
                                        c.bias ? random_tensor(rng(), {c.w[0]}, DType::kF64) : Tensor()};
    const auto options = c.options;
    const nn::testing::LayerFn fn = [options](const std::vector<Variable>& v) {
      return conv(v[0], v[1], v[2], options);
    };
    const Tensor probe = fn({Variable(inputs[0]), Variable(inputs[1]), Variable()}).data();
    const Tensor grad_out = random_tensor(rng(), probe.shape(), DType::kF64);
    nn::testing::expect_matches_f64(fn, inputs, grad_out, DType::kF32, Device::cpu(), 1e-5);
    // A channels-last input (the weight stays row-major): f32, and f64
    // against the row-major f64 result.
    for (const DType dtype : {DType::kF32, DType::kF64}) {
      SCOPED_TRACE(absl::StrCat("channels_last ", dtype_name(dtype)));
      nn::testing::expect_matches_f64(fn, inputs, grad_out, dtype, Device::cpu(), dtype == DType::kF64 ? 1e-12 : 1e-5,
                                      MemoryFormat::kChannelsLast);
    }
  };
  for_each_case(check);
  // ResNet-20's stage-2 convolution on a batch of 8 (two im2col chunks).
  check(Case<2>{"resnet20 stage 2", {8, 32, 16, 16}, {32, 32, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}, false});
}

TEST_F(ConvTest, ReducedFloatsOnCpuComputeInF32) {
  const Tensor x = random_tensor(rng(), {2, 3, 6, 6}, DType::kBF16);
  const Tensor w = random_tensor(rng(), {4, 3, 3, 3}, DType::kBF16);
  const Variable out = conv2d(Variable(x), Variable(w), Variable(), {{1, 1}, {1, 1}});
  EXPECT_EQ(out.dtype(), DType::kBF16);
  const Ref want = reference(ref_of(x), ref_of(w), nullptr, Conv2dOptions{{1, 1}, {1, 1}});
  ts::testing::expect_close(out.data(), want, ts::testing::tolerance(DType::kBF16), 27.0 / 4);
}

TEST_F(ConvTest, Gradcheck) {
  const auto check = [&](const auto& c) {
    for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", c.x.size() - 2, "-D ", memory_format_name(format)));
      std::vector<Tensor> inputs = {contiguous(random_tensor(rng(), c.x, DType::kF64), format),
                                    random_tensor(rng(), c.w, DType::kF64)};
      if (c.bias) inputs.push_back(random_tensor(rng(), {c.w[0]}, DType::kF64));
      const auto options = c.options;
      EXPECT_OK(autograd::gradcheck(
          [options](const std::vector<Variable>& v) {
            return conv(v[0], v[1], v.size() > 2 ? v[2] : Variable(), options);
          },
          inputs));
    }
  };
  check(Case<2>{"3x3 pad 1", {2, 3, 5, 4}, {2, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1}, true});
  check(Case<2>{"stride, dilation, asymmetric", {1, 2, 7, 6}, {3, 2, 2, 3}, {{2, 1}, {1, 2}, {2, 1}, 1}, true});
  check(Case<2>{"groups", {2, 4, 4, 4}, {6, 2, 3, 1}, {{1, 2}, {0, 1}, {1, 1}, 2}, true});
  check(Case<2>{"1x1", {2, 3, 3, 2}, {2, 3, 1, 1}, {{1, 1}, {0, 0}, {1, 1}, 1}, false});
  check(Case<3>{"3x3x3 pad 1", {1, 2, 3, 4, 3}, {2, 2, 3, 3, 3}, {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1}, true});
  check(Case<3>{
      "stride, dilation, groups", {1, 4, 5, 3, 4}, {2, 2, 2, 1, 2}, {{2, 1, 1}, {0, 1, 1}, {2, 1, 1}, 2}, false});
}

TEST_F(ConvTest, OnlyRequestedGradientsAreComputed) {
  const Variable x(random_tensor(rng(), {2, 3, 5, 5}, DType::kF32), false);
  const Variable w(random_tensor(rng(), {4, 3, 3, 3}, DType::kF32), true);
  const Variable out = conv2d(x, w, Variable(), {});
  out.backward(ones(out.shape()));
  EXPECT_FALSE(x.grad().defined());
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().shape(), w.shape());
}

TEST_F(ConvTest, BadInputsAreErrorsNamingTheShapes) {
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
  const Variable volume(random_tensor(rng(), {1, 2, 4, 4, 4}, DType::kF32));
  const Variable kernel(random_tensor(rng(), {3, 2, 3, 3, 3}, DType::kF32));
  ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"conv3d", "5-D", "[1, 2, 4, 4]"}, [&] {
    conv3d(Variable(random_tensor(rng(), {1, 2, 4, 4}, DType::kF32)), kernel, Variable(), {});
  });
  ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"conv3d", "larger than the padded input", "5x3x3"},
                             [&] {
                               conv3d(volume, kernel, Variable(), {.dilation = {2, 1, 1}});
                             });
  ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"conv3d", "stride [1, 0, 1]"}, [&] {
    conv3d(volume, kernel, Variable(), {.stride = {1, 0, 1}});
  });
}

// Calls check(layer, inputs, grad_out, dtype, format) for every case, each
// of `dtypes` and both memory formats, on fresh random values.
template <typename Check>
void for_each_typed_case(std::mt19937_64& rng, std::initializer_list<DType> dtypes, Check check) {
  for_each_case([&](const auto& c) {
    for (const DType dtype : dtypes) {
      for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
        SCOPED_TRACE(
            absl::StrCat(c.name, " ", c.x.size() - 2, "-D ", dtype_name(dtype), " ", memory_format_name(format)));
        const std::vector<Tensor> inputs = {random_tensor(rng, c.x, dtype), random_tensor(rng, c.w, dtype),
                                            c.bias ? random_tensor(rng, {c.w[0]}, dtype) : Tensor()};
        const auto options = c.options;
        const Tensor probe = conv(Variable(inputs[0]), Variable(inputs[1]), Variable(), options).data();
        const Tensor grad_out = random_tensor(rng, probe.shape(), DType::kF64);
        const auto layer = [options](const std::vector<Variable>& v) { return conv(v[0], v[1], v[2], options); };
        check(layer, inputs, grad_out, dtype, format);
      }
    }
  });
}

// f16 and bf16 on the CPU (computed in f32, rounded once per result)
// against float64 on the same values, output and gradients, within 1e-2 of
// each result's largest magnitude, in both memory formats.
TEST_F(ConvTest, ReducedFloatsOnCpuMatchFloat64) {
  for_each_typed_case(rng(), {DType::kF16, DType::kBF16},
                      [](auto layer, auto& inputs, auto& grad_out, DType dtype, MemoryFormat format) {
                        nn::testing::expect_matches_f64(layer, inputs, grad_out, dtype, Device::cpu(),
                                                        ts::testing::tolerance(dtype), format);
                      });
}

TEST_F(ConvTest, CudaMatchesCpu) {
  TS_SKIP_WITHOUT_CUDA();
  for_each_typed_case(rng(), {DType::kF32, DType::kF16, DType::kBF16, DType::kF64},
                      [](auto layer, auto& inputs, auto& grad_out, DType dtype, MemoryFormat format) {
                        nn::testing::expect_cuda_matches_cpu(
                            layer, inputs, grad_out, dtype,
                            dtype == DType::kF64 ? 1e-10 : ts::testing::tolerance(dtype), format);
                      });
}

// Under deterministic algorithms, cuDNN's choice for each direction is one it
// marks deterministic, so repeated backwards give the same bits. The shape
// is ResNet's 3x3 at a batch where backward-filter has fast nondeterministic
// candidates; f32 and channels-last f16, the layouts training uses.
TEST_F(ConvTest, CudaDeterministicAlgorithmsRepeatBitForBit) {
  TS_SKIP_WITHOUT_CUDA();
  set_deterministic_algorithms(true);
  for (const auto& layout :
       {std::pair{DType::kF32, MemoryFormat::kContiguous}, std::pair{DType::kF16, MemoryFormat::kChannelsLast}}) {
    // Not a structured binding: clang before 16 cannot capture one.
    const DType dtype = layout.first;
    const MemoryFormat format = layout.second;
    SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", memory_format_name(format)));
    const auto on_gpu = [&](const Tensor& t) { return contiguous(to(to(t, dtype), Device::cuda(0)), format); };
    const Tensor x = on_gpu(random_tensor(rng(), {32, 64, 28, 28}, DType::kF32));
    const Tensor w = on_gpu(random_tensor(rng(), {64, 64, 3, 3}, DType::kF32));
    const Tensor grad_out = on_gpu(random_tensor(rng(), {32, 64, 28, 28}, DType::kF32));
    const auto gradient_bits = [&] {
      const Variable input(x, /*requires_grad=*/true), weight(w, /*requires_grad=*/true);
      conv2d(input, weight, Variable(), {{1, 1}, {1, 1}, {1, 1}, 1}).backward(grad_out);
      return std::pair{to_vector<float>(to(input.grad(), DType::kF32)),
                       to_vector<float>(to(weight.grad(), DType::kF32))};
    };
    const auto first = gradient_bits();
    for (int repeat = 0; repeat < 3; ++repeat) EXPECT_EQ(gradient_bits(), first);
  }
  set_deterministic_algorithms(false);
}

}  // namespace
}  // namespace ts::nn::functional
