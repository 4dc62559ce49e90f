// max_pool2d, avg_pool2d and adaptive_avg_pool2d against float64 references
// written from PyTorch's definitions (padding, ceil_mode, count_include_pad,
// adaptive windows), f32 on both CPU paths (oneDNN and the reference
// kernels), gradcheck, errors, the outputs whose windows hold an input pixel
// (CUDA's backwards gather through them), and CUDA against CPU.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/gradcheck.h"
#include "gtest/gtest.h"
#include "nn/functional.h"
#include "nn/functional/cpu_reference_path.h"
#include "nn/functional/geometry.h"
#include "tests/nn/functional/layer_testing.h"
#include "tests/tensor/testing.h"

namespace ts::nn::functional {
namespace {

using autograd::Variable;
using ::ts::testing::random_tensor;
using ::ts::testing::Ref;
using ::ts::testing::ref_of;

struct PoolCase {
  std::string name;
  Shape x;
  Pool2dOptions options;
};

std::vector<PoolCase> cases() {
  return {
      {"2x2 stride 2", {2, 3, 8, 6}, {{2, 2}, {2, 2}, {0, 0}, false, true}},
      {"3x3 stride 2 pad 1", {2, 2, 9, 7}, {{3, 3}, {2, 2}, {1, 1}, false, true}},
      {"3x3 stride 2 pad 1, excluding pad", {1, 2, 9, 7}, {{3, 3}, {2, 2}, {1, 1}, false, false}},
      {"ceil mode", {2, 2, 7, 8}, {{3, 2}, {2, 3}, {1, 0}, true, true}},
      {"ceil mode, excluding pad", {2, 2, 7, 8}, {{3, 3}, {2, 2}, {1, 1}, true, false}},
      // The last window reaches past the far padding: PyTorch divides by the
      // part up to the padding's edge (oneDNN would count the whole kernel).
      {"ceil mode past the padding", {1, 2, 6, 6}, {{3, 3}, {2, 2}, {1, 1}, true, true}},
      {"overlapping, stride 1", {1, 3, 5, 5}, {{3, 2}, {1, 1}, {1, 1}, false, true}},
      // Pixels no window holds: their gradient is 0.
      {"stride past the kernel", {1, 2, 8, 7}, {{2, 2}, {3, 3}, {1, 1}, false, true}},
      {"3-D input", {3, 6, 5}, {{2, 3}, {2, 2}, {1, 1}, true, true}},
  };
}

// The layouts an input can take: channels-last too when it is 4-D.
std::vector<MemoryFormat> layouts_of(const Tensor& x) {
  if (x.dim() != 4) return {MemoryFormat::kContiguous};
  return {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast};
}

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  const double span = static_cast<double>(in + 2 * p - k) / s;
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// Pools each [h, w] plane with `reduce(values, window_size_with_pad)`, where
// values are the window's in-bounds inputs.
template <typename Reduce>
Ref pool_reference(const Ref& x, const Pool2dOptions& o, Reduce reduce) {
  const int64_t nd = x.shape.size(), h = x.shape[nd - 2], w = x.shape[nd - 1];
  const int64_t planes = x.numel() / (h * w);
  const int64_t oh = out_size(h, o.kernel[0], o.stride[0], o.padding[0], o.ceil_mode);
  const int64_t ow = out_size(w, o.kernel[1], o.stride[1], o.padding[1], o.ceil_mode);
  Ref out{x.shape, std::vector<double>(planes * oh * ow)};
  out.shape[nd - 2] = oh;
  out.shape[nd - 1] = ow;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        std::vector<double> values;
        const int64_t y0 = i * o.stride[0] - o.padding[0], z0 = j * o.stride[1] - o.padding[1];
        // The window as PyTorch counts it with padding: cut at the far padding edge.
        const int64_t y1 = std::min(y0 + o.kernel[0], h + o.padding[0]);
        const int64_t z1 = std::min(z0 + o.kernel[1], w + o.padding[1]);
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t z = z0; z < z1; ++z)
            if (y >= 0 && y < h && z >= 0 && z < w) values.push_back(x.v[(p * h + y) * w + z]);
        out.v[(p * oh + i) * ow + j] = reduce(values, (y1 - y0) * (z1 - z0));
      }
  return out;
}

double max_of(const std::vector<double>& v, int64_t) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : v) m = std::max(m, x);
  return m;
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

Ref adaptive_reference(const Ref& x, int64_t oh, int64_t ow) {
  const int64_t nd = x.shape.size(), h = x.shape[nd - 2], w = x.shape[nd - 1];
  const int64_t planes = x.numel() / (h * w);
  Ref out{x.shape, std::vector<double>(planes * oh * ow)};
  out.shape[nd - 2] = oh;
  out.shape[nd - 1] = ow;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const auto y0 = static_cast<int64_t>(std::floor(double(i) * h / oh));
        const auto y1 = static_cast<int64_t>(std::ceil(double(i + 1) * h / oh));
        const auto z0 = static_cast<int64_t>(std::floor(double(j) * w / ow));
        const auto z1 = static_cast<int64_t>(std::ceil(double(j + 1) * w / ow));
        double s = 0;
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t z = z0; z < z1; ++z) s += x.v[(p * h + y) * w + z];
        out.v[(p * oh + i) * ow + j] = s / ((y1 - y0) * (z1 - z0));
      }
  return out;
}

// Uniform windows ({1, 1}, {7, 5} of a 7x5 input) run on oneDNN for f32.
const std::vector<std::array<int64_t, 2>> kAdaptiveSizes = {{3, 2}, {1, 1}, {5, 7}, {7, 4}, {2, 9}, {7, 5}};

class PoolingTest : public ts::testing::SeededTest {
 protected:
  // f64 values in [-1, 1) far apart (2 / numel), shuffled: no two elements of
  // a max window are within a gradcheck step of each other.
  Tensor distinct(Dims shape) {
    std::vector<double> v(shape_numel(shape));
    for (size_t i = 0; i < v.size(); ++i) v[i] = -1 + 2.0 * i / v.size();
    std::shuffle(v.begin(), v.end(), rng());
    return from_vector<double>(v, shape);
  }
};

TEST_F(PoolingTest, MaxMatchesReference) {
  for (const DType dtype : {DType::kF32, DType::kF64, DType::kF16}) {
    for (const PoolCase& c : cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(dtype)));
      const Tensor x = random_tensor(rng(), c.x, dtype);
      const Variable y = max_pool2d(Variable(x), c.options);
      EXPECT_EQ(y.dtype(), dtype);
      ts::testing::expect_equal(y.data(), pool_reference(ref_of(x), c.options, max_of));
    }
  }
}

TEST_F(PoolingTest, AvgMatchesReference) {
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    for (const PoolCase& c : cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(dtype)));
      const Tensor x = random_tensor(rng(), c.x, dtype);
      const Variable y = avg_pool2d(Variable(x), c.options);
      const bool include_pad = c.options.count_include_pad;
      const Ref want =
          pool_reference(ref_of(x), c.options, [include_pad](const std::vector<double>& v, int64_t padded) {
            return sum_of(v) / (include_pad ? padded : static_cast<int64_t>(v.size()));
          });
      ts::testing::expect_close(y.data(), want, ts::testing::tolerance(dtype), 1.0);
    }
  }
}

TEST_F(PoolingTest, AdaptiveAvgMatchesReference) {
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    for (const auto& size : kAdaptiveSizes) {
      SCOPED_TRACE(absl::StrCat(size[0], "x", size[1], " ", dtype_name(dtype)));
      const Tensor x = random_tensor(rng(), {2, 3, 7, 5}, dtype);
      const Variable y = adaptive_avg_pool2d(Variable(x), size);
      ts::testing::expect_close(y.data(), adaptive_reference(ref_of(x), size[0], size[1]),
                                ts::testing::tolerance(dtype), 1.0);
    }
  }
}

// The f32 checks run once per CPU path: oneDNN (the default) and the
// reference kernels (TS_CPU_REFERENCE=1), each against f64, forward and
// backward. f64 itself always takes the reference path.
class PoolingCpuPathTest : public PoolingTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    reference_before_ = cpu_reference_path();
    set_cpu_reference_path(GetParam());
  }
  void TearDown() override { set_cpu_reference_path(reference_before_); }

  // fn in f32 against fn in f64 on the same inputs, output and gradient;
  // for a 4-D x also channels-last, in f32 and f64.
  void expect_f32_matches_f64(const nn::testing::LayerFn& fn, const Tensor& x) {
    const Tensor probe = fn({Variable(x)}).data();
    const Tensor grad_out = random_tensor(rng(), probe.shape(), DType::kF64);
    nn::testing::expect_matches_f64(fn, {x}, grad_out, DType::kF32, Device::cpu(), 1e-5);
    if (x.dim() != 4) return;
    for (const DType dtype : {DType::kF32, DType::kF64}) {
      SCOPED_TRACE(absl::StrCat("channels_last ", dtype_name(dtype)));
      nn::testing::expect_matches_f64(fn, {x}, grad_out, dtype, Device::cpu(), dtype == DType::kF64 ? 1e-12 : 1e-5,
                                      MemoryFormat::kChannelsLast);
    }
  }

 private:
  bool reference_before_ = false;
};

INSTANTIATE_TEST_SUITE_P(Paths, PoolingCpuPathTest, ::testing::Bool(), [](const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Reference" : "OneDnn";
});

TEST_P(PoolingCpuPathTest, Float32MatchesFloat64) {
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const Pool2dOptions o = c.options;
    // Distinct values: f32 rounding cannot move a max window's argmax.
    expect_f32_matches_f64([o](const std::vector<Variable>& v) { return max_pool2d(v[0], o); }, distinct(c.x));
    expect_f32_matches_f64([o](const std::vector<Variable>& v) { return avg_pool2d(v[0], o); },
                           random_tensor(rng(), c.x, DType::kF64));
  }
  for (const auto& size : kAdaptiveSizes) {
    SCOPED_TRACE(absl::StrCat("adaptive ", size[0], "x", size[1]));
    expect_f32_matches_f64([size](const std::vector<Variable>& v) { return adaptive_avg_pool2d(v[0], size); },
                           random_tensor(rng(), {2, 3, 7, 5}, DType::kF64));
  }
}

// A tie sends the gradient to the window's first maximum, as PyTorch does.
TEST_P(PoolingCpuPathTest, MaxTiesGoToTheFirstMaximum) {
  const Tensor x = from_vector<float>({2, 2, 1, 2}, {1, 1, 2, 2});
  const nn::testing::LayerFn fn = [](const std::vector<Variable>& v) { return max_pool2d(v[0], {}); };
  const std::vector<Tensor> got =
      nn::testing::forward_backward(fn, {x}, from_vector<float>({1}, {1, 1, 1, 1}), Device::cpu());
  ts::testing::expect_equal(got[1], Ref{{1, 1, 2, 2}, {1, 0, 0, 0}});
}

TEST_P(PoolingCpuPathTest, MaxPropagatesNan) {
  const Tensor x = from_vector<float>({1, NAN, 3, 4}, {1, 1, 2, 2});
  const Variable y = max_pool2d(Variable(x), {});
  EXPECT_TRUE(std::isnan(item<float>(y.data())));
}

// A window's gradient goes to its last NaN, as PyTorch's kernels send it
// (CPU and CUDA, either layout: `val > maxval || isnan(val)`, no early exit).
TEST_P(PoolingCpuPathTest, MaxGradientGoesToTheLastNan) {
  const Tensor x = from_vector<float>({1, NAN, 3, NAN,  //
                                       NAN, 2, NAN, 0},
                                      {1, 2, 1, 4});
  const Pool2dOptions o{.kernel = {1, 4}, .stride = {1, 4}};
  const nn::testing::LayerFn fn = [o](const std::vector<Variable>& v) { return max_pool2d(v[0], o); };
  const Tensor grad = from_vector<float>({1, 1}, {1, 2, 1, 1});
  for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
    SCOPED_TRACE(memory_format_name(format));
    const std::vector<Tensor> got = nn::testing::forward_backward(fn, {x}, grad, Device::cpu(), format);
    ts::testing::expect_equal(got[1], Ref{{1, 2, 1, 4}, {0, 0, 0, 1, 0, 0, 1, 0}});
  }
}

// Channels-last max pooling picks what row-major picks, channel by channel:
// the first of tied maxima, the last NaN (and a NaN after a larger value),
// -inf windows, overlapping windows whose gradients add up.
TEST_P(PoolingCpuPathTest, ChannelsLastMaxPicksAsRowMajor) {
  const float inf = std::numeric_limits<float>::infinity();
  // [1, 4, 3, 3]: ties; NaNs; a value above a NaN; all -inf.
  const Tensor x = from_vector<float>({2,    1,    2,    2,    2,    0,    1,    2,    2,  //
                                       1,    NAN,  3,    4,    9,    NAN,  0,    1,    2,  //
                                       5,    1,    1,    1,    1,    1,    1,    1,    5,  //
                                       -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
                                      {1, 4, 3, 3});
  const Pool2dOptions o{.kernel = {2, 2}, .stride = {1, 1}};
  const nn::testing::LayerFn fn = [o](const std::vector<Variable>& v) { return max_pool2d(v[0], o); };
  const Tensor grad = from_vector<float>(std::vector<float>(16, 1.0f), {1, 4, 2, 2});
  const std::vector<Tensor> row_major = nn::testing::forward_backward(fn, {x}, grad, Device::cpu());
  const std::vector<Tensor> nhwc =
      nn::testing::forward_backward(fn, {x}, grad, Device::cpu(), MemoryFormat::kChannelsLast);
  EXPECT_TRUE(nhwc[0].is_contiguous(MemoryFormat::kChannelsLast));
  const std::vector<float> a = to_vector<float>(nhwc[0]), b = to_vector<float>(row_major[0]);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) << "output " << i;
  }
  ts::testing::expect_equal(nhwc[1], ts::testing::ref_of(row_major[1]), "gradient");
}

TEST_F(PoolingTest, Gradcheck) {
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const Pool2dOptions o = c.options;
    for (const MemoryFormat format : layouts_of(distinct(c.x))) {
      SCOPED_TRACE(memory_format_name(format));
      EXPECT_OK(autograd::gradcheck([o](const std::vector<Variable>& v) { return max_pool2d(v[0], o); },
                                    {contiguous(distinct(c.x), format)}));
      EXPECT_OK(autograd::gradcheck([o](const std::vector<Variable>& v) { return avg_pool2d(v[0], o); },
                                    {contiguous(random_tensor(rng(), c.x, DType::kF64), format)}));
    }
  }
  for (const auto& size : kAdaptiveSizes) {
    SCOPED_TRACE(absl::StrCat("adaptive ", size[0], "x", size[1]));
    EXPECT_OK(autograd::gradcheck([size](const std::vector<Variable>& v) { return adaptive_avg_pool2d(v[0], size); },
                                  {random_tensor(rng(), {2, 2, 7, 5}, DType::kF64)}));
  }
}

// No stride given: the kernel's, as PyTorch's stride=None (a 3x3 window
// over 6x6 gives 2x2, not the 2x2 of stride 2).
TEST_F(PoolingTest, StrideDefaultsToTheKernel) {
  const Variable x(random_tensor(rng(), {1, 2, 6, 6}, DType::kF32));
  EXPECT_EQ(max_pool2d(x, {.kernel = {3, 3}}).shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(avg_pool2d(x, {.kernel = {3, 2}}).shape(), (Shape{1, 2, 2, 3}));
  ts::testing::expect_equal(max_pool2d(x, {.kernel = {3, 3}}).data(),
                            ts::testing::ref_of(max_pool2d(x, {.kernel = {3, 3}, .stride = {3, 3}}).data()));
}

TEST_F(PoolingTest, BadInputsAreErrors) {
  using ts::testing::expect_throws;
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  const Variable x(random_tensor(rng(), {2, 3, 4, 4}, DType::kF32));
  expect_throws(kInvalid, {"max_pool2d", "padding [2, 2]", "half"}, [&] { max_pool2d(x, {{2, 2}, {2, 2}, {2, 2}}); });
  expect_throws(kInvalid, {"avg_pool2d", "kernel [6, 6]", "[2, 3, 4, 4]"}, [&] {
    avg_pool2d(x, {{6, 6}, {1, 1}, {0, 0}});
  });
  expect_throws(kInvalid, {"max_pool2d", "stride [0, 2]"}, [&] { max_pool2d(x, {{2, 2}, {0, 2}}); });
  const Variable flat(random_tensor(rng(), {3, 4}, DType::kF32));
  expect_throws(kInvalid, {"avg_pool2d", "[3, 4]"}, [&] { avg_pool2d(flat, {}); });
  expect_throws(kInvalid, {"adaptive_avg_pool2d", "[0, 2]", "[2, 3, 4, 4]"}, [&] { adaptive_avg_pool2d(x, {0, 2}); });
  const Variable ints(zeros({1, 1, 2, 2}, {DType::kI64}));
  expect_throws(kInvalid, {"max_pool2d", "floating-point", "i64"}, [&] { max_pool2d(ints, {}); });
  // A 3x3 window, stride 2, over 2x2: no window fits (PyTorch: "Output size
  // is too small"); with ceil_mode one does.
  const Variable small(random_tensor(rng(), {1, 1, 2, 2}, DType::kF32));
  expect_throws(kInvalid, {"max_pool2d", "kernel [3, 3]", "[1, 1, 2, 2]"}, [&] {
    max_pool2d(small, {{3, 3}, {2, 2}});
  });
  expect_throws(kInvalid, {"avg_pool2d", "kernel [2, 2]", "[1, 1, 1, 1]"}, [&] {
    avg_pool2d(Variable(ones({1, 1, 1, 1})), {{2, 2}, {2, 2}});
  });
  EXPECT_EQ(max_pool2d(small, {{3, 3}, {2, 2}, {0, 0}, /*ceil_mode=*/true}).shape(), (Shape{1, 1, 1, 1}));
}

TEST_F(PoolingTest, CoverIsTheOutputsWhoseWindowsHoldAnInputPixel) {
  for (const PoolCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const Pool2dOptions& o = c.options;
    Pool2dGeometry g{};
    g.h = c.x[c.x.size() - 2], g.w = c.x.back();
    g.kh = o.kernel[0], g.kw = o.kernel[1], g.stride_h = o.stride[0], g.stride_w = o.stride[1];
    g.pad_h = o.padding[0], g.pad_w = o.padding[1];
    g.out_h = out_size(g.h, g.kh, g.stride_h, g.pad_h, o.ceil_mode);
    g.out_w = out_size(g.w, g.kw, g.stride_w, g.pad_w, o.ceil_mode);
    // Along one dim: `window(o)` is output o's input range [begin, end).
    const auto expect_cover = [](const char* dim, int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t out,
                                 auto window) {
      for (int64_t i = 0; i < in; ++i) {
        std::vector<int64_t> holding, covered;
        for (int64_t o = 0; o < out; ++o) {
          const auto [begin, end] = window(o);
          if (begin <= i && i < end) holding.push_back(o);
        }
        const PoolCover cover = pool_cover(i, kernel, IntDivider(stride), pad, out);
        for (int64_t o = cover.begin; o < cover.end; ++o) covered.push_back(o);
        EXPECT_EQ(covered, holding) << dim << " " << i;
      }
    };
    expect_cover("row", g.h, g.kh, g.stride_h, g.pad_h, g.out_h, [&](int64_t oh) {
      const PoolWindow win = pool_window(g, oh, 0);
      return std::pair(win.h0, win.h1);
    });
    expect_cover("column", g.w, g.kw, g.stride_w, g.pad_w, g.out_w, [&](int64_t ow) {
      const PoolWindow win = pool_window(g, 0, ow);
      return std::pair(win.w0, win.w1);
    });
  }
}

TEST_F(PoolingTest, AdaptiveCoverIsTheOutputsWhoseWindowsHoldAnInputPixel) {
  for (int64_t in = 1; in <= 13; ++in) {
    for (int64_t out = 1; out <= 13; ++out) {
      Pool2dGeometry g{};
      g.adaptive = true;
      g.h = in, g.w = 1, g.out_h = out, g.out_w = 1;
      for (int64_t i = 0; i < in; ++i) {
        std::vector<int64_t> holding, covered;
        for (int64_t o = 0; o < out; ++o) {
          const PoolWindow win = pool_window(g, o, 0);
          if (win.h0 <= i && i < win.h1) holding.push_back(o);
        }
        const PoolCover cover = adaptive_pool_cover(i, in, out);
        for (int64_t o = cover.begin; o < cover.end; ++o) covered.push_back(o);
        EXPECT_EQ(covered, holding) << in << " -> " << out << ", input " << i;
      }
    }
  }
}

// The CUDA kernels walk their results in memory order: pool_element_at
// gives each position's plane and pixel, and pool_plane puts that pixel of
// that plane back at the same position, in both layouts (divisions by
// multiply-shift, against the plain index arithmetic).
TEST_F(PoolingTest, ElementsAndPlanesRoundTripInBothLayouts) {
  for (const bool channels_last : {false, true}) {
    SCOPED_TRACE(channels_last ? "channels-last" : "row-major");
    Pool2dGeometry g{};
    g.channels = 7, g.h = 5, g.w = 3, g.out_h = 3, g.out_w = 2, g.planes = 2 * 7;
    g.stride_h = 2, g.stride_w = 2;
    g.channels_last = channels_last;
    const PoolDividers by(g);
    for (const auto& [rows, cols, by_plane] :
         {std::tuple(g.h, g.w, by.plane), std::tuple(g.out_h, g.out_w, by.out_plane)}) {
      for (int64_t position = 0; position < g.planes * rows * cols; ++position) {
        const PoolElement at = pool_element_at(g, by.channels, by_plane, position);
        const int64_t n = position / (rows * cols * g.channels);
        const int64_t c = channels_last ? position % g.channels : position / (rows * cols) % g.channels;
        const int64_t pixel = channels_last ? position / g.channels % (rows * cols) : position % (rows * cols);
        ASSERT_EQ(at.plane, n * g.channels + c) << position;
        ASSERT_EQ(at.pixel, pixel) << position;
        ASSERT_EQ(pool_plane(g, by.channels, at.plane, rows, cols).at(at.pixel), position);
      }
    }
  }
}

TEST_F(PoolingTest, CudaMatchesCpu) {
  TS_SKIP_WITHOUT_CUDA();
  for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    const double tol = dtype == DType::kF64 ? 1e-12 : is_reduced_float(dtype) ? 1e-2 : 1e-6;
    for (const PoolCase& c : cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(dtype)));
      const Pool2dOptions o = c.options;
      const Tensor x = random_tensor(rng(), c.x, dtype);
      const Shape out_shape = max_pool2d(Variable(x), o).shape();
      for (const MemoryFormat format : layouts_of(x)) {
        SCOPED_TRACE(memory_format_name(format));
        nn::testing::expect_cuda_matches_cpu([o](const std::vector<Variable>& v) { return max_pool2d(v[0], o); }, {x},
                                             random_tensor(rng(), out_shape, DType::kF64), dtype, tol, format);
        nn::testing::expect_cuda_matches_cpu([o](const std::vector<Variable>& v) { return avg_pool2d(v[0], o); }, {x},
                                             random_tensor(rng(), out_shape, DType::kF64), dtype, tol, format);
      }
    }
    for (const auto& size : kAdaptiveSizes) {
      for (const MemoryFormat format : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast}) {
        SCOPED_TRACE(
            absl::StrCat("adaptive ", size[0], "x", size[1], " ", dtype_name(dtype), " ", memory_format_name(format)));
        nn::testing::expect_cuda_matches_cpu(
            [size](const std::vector<Variable>& v) { return adaptive_avg_pool2d(v[0], size); },
            {random_tensor(rng(), {2, 3, 7, 5}, dtype)}, random_tensor(rng(), {2, 3, size[0], size[1]}, DType::kF64),
            dtype, tol, format);
      }
    }
  }
}

// Overlapping windows: the backwards sum each input's shares in a fixed
// order, so two runs give the same bits (atomics would not).
TEST_F(PoolingTest, CudaBackwardsRepeatBitForBit) {
  TS_SKIP_WITHOUT_CUDA();
  const Tensor x = to(random_tensor(rng(), {4, 8, 17, 13}, DType::kF32), Device::cuda(0));
  const auto input_grad_bits = [&x](const std::function<Variable(const Variable&)>& pool) {
    const Variable input(x, /*requires_grad=*/true);
    const Variable y = pool(input);
    std::mt19937_64 same_every_call(7);
    y.backward(to(random_tensor(same_every_call, y.shape(), DType::kF32), Device::cuda(0)));
    return to_vector<float>(input.grad());
  };
  Pool2dOptions o;
  o.kernel = {3, 3};
  o.stride = {1, 1};
  o.padding = {1, 1};
  const auto avg = [o](const Variable& v) { return avg_pool2d(v, o); };
  EXPECT_EQ(input_grad_bits(avg), input_grad_bits(avg));
  const auto adaptive = [](const Variable& v) { return adaptive_avg_pool2d(v, {5, 6}); };
  EXPECT_EQ(input_grad_bits(adaptive), input_grad_bits(adaptive));
}

}  // namespace
}  // namespace ts::nn::functional
