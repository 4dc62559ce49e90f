// Channels-last tensors: their strides, the layout tests, the copies between
// layouts, and the rule that elementwise results keep a channels-last
// operand's layout while computing the same values as on row-major copies.
#include <cmath>
#include <vector>

#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::random_tensor;

constexpr MemoryFormat kChannelsLast = MemoryFormat::kChannelsLast;

// The same values, laid out channels-last.
Tensor channels_last(const Tensor& t) { return contiguous(t, kChannelsLast); }

// Same shape and, element by element, the same values (NaN matching NaN)
// to within `tol` relative.
void expect_same_values(const Tensor& actual, const Tensor& expected, const std::string& what, double tol = 1e-6) {
  SCOPED_TRACE(what);
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), expected.dtype());
  const std::vector<double> a = to_vector<double>(actual), e = to_vector<double>(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(e[i])) {
      ASSERT_TRUE(std::isnan(a[i])) << "element " << i;
      continue;
    }
    ASSERT_LE(std::abs(a[i] - e[i]), tol * std::max(std::abs(e[i]), 1.0)) << "element " << i;
  }
}

class MemoryFormatTest : public testing::SeededTest {};

TEST(MemoryFormatStridesTest, ChannelsInnermostThenSpaceThenBatch) {
  EXPECT_EQ(dense_strides({2, 3, 4, 5}, kChannelsLast), (Shape{60, 1, 15, 3}));
  EXPECT_EQ(dense_strides({2, 3, 4, 5, 6}, kChannelsLast), (Shape{360, 1, 90, 18, 3}));
  EXPECT_EQ(dense_strides({2, 3, 4, 5}, MemoryFormat::kContiguous), (Shape{60, 20, 5, 1}));
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"channels_last", "[2, 3, 4]"}, [] {
    dense_strides({2, 3, 4}, kChannelsLast);
  });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"channels_last", "[6]"}, [] {
    zeros({6}, {DType::kF32, Device::cpu(), kChannelsLast});
  });
}

TEST(MemoryFormatStridesTest, LayoutTestsAndTheSuggestedFormat) {
  const Tensor row_major = zeros({2, 3, 4, 5});
  const Tensor nhwc = zeros({2, 3, 4, 5}, {DType::kF32, Device::cpu(), kChannelsLast});
  EXPECT_TRUE(nhwc.is_contiguous(kChannelsLast));
  EXPECT_FALSE(nhwc.is_contiguous());
  EXPECT_EQ(nhwc.suggest_memory_format(), kChannelsLast);
  EXPECT_FALSE(row_major.is_contiguous(kChannelsLast));
  EXPECT_EQ(row_major.suggest_memory_format(), MemoryFormat::kContiguous);
  // An [N, H, W, C] buffer permuted to NCHW is channels-last.
  EXPECT_TRUE(zeros({2, 4, 5, 3}).permute({0, 3, 1, 2}).is_contiguous(kChannelsLast));
  // With one pixel, or one channel, both layouts are one memory order: the
  // strides of the size-1 dims say which the tensor was made in.
  const Tensor pooled = zeros({2, 3, 1, 1}, {DType::kF32, Device::cpu(), kChannelsLast});
  EXPECT_TRUE(pooled.is_contiguous());
  EXPECT_EQ(pooled.suggest_memory_format(), kChannelsLast);
  EXPECT_EQ(zeros({2, 3, 1, 1}).suggest_memory_format(), MemoryFormat::kContiguous);
  EXPECT_EQ(pooled.view({2, 3}).strides(), (Shape{3, 1}));
  const Tensor gray = zeros({2, 1, 4, 5}, {DType::kF32, Device::cpu(), kChannelsLast});
  EXPECT_TRUE(gray.is_contiguous());
  EXPECT_EQ(gray.suggest_memory_format(), kChannelsLast);
  EXPECT_EQ(zeros({2, 1, 4, 5}).suggest_memory_format(), MemoryFormat::kContiguous);
  // Where the two layouts' strides agree too, row-major.
  EXPECT_EQ(zeros({2, 1, 1, 1}, {DType::kF32, Device::cpu(), kChannelsLast}).suggest_memory_format(),
            MemoryFormat::kContiguous);
  // Not dense in either order.
  EXPECT_FALSE(nhwc.slice(2, 0, 4, 2).is_contiguous(kChannelsLast));
  EXPECT_FALSE(zeros({3, 4, 5}).is_contiguous(kChannelsLast));
}

// A row-major tensor whose memory is already in channels-last order (one
// channel) becomes channels-last without a copy: the same storage, restrided.
TEST_F(MemoryFormatTest, OneChannelBecomesChannelsLastWithoutACopy) {
  const Tensor gray = random_tensor(rng(), {2, 1, 4, 5}, DType::kF32);
  const Tensor nhwc = channels_last(gray);
  EXPECT_EQ(nhwc.suggest_memory_format(), kChannelsLast);
  EXPECT_EQ(nhwc.strides(), (Shape{20, 1, 5, 1}));
  EXPECT_EQ(nhwc.raw_data(), gray.raw_data());
  EXPECT_EQ(to_vector<float>(nhwc), to_vector<float>(gray));
  // Ops on it keep the layout, so a network's first convolution sees it.
  EXPECT_EQ(relu(nhwc).suggest_memory_format(), kChannelsLast);
  // And back, restrided too.
  const Tensor back = contiguous(nhwc);
  EXPECT_EQ(back.raw_data(), gray.raw_data());
  EXPECT_EQ(back.strides(), gray.strides());
  EXPECT_EQ(back.suggest_memory_format(), MemoryFormat::kContiguous);
}

TEST_F(MemoryFormatTest, CopiesBetweenLayoutsKeepTheValues) {
  const Tensor x = random_tensor(rng(), {2, 3, 4, 5}, DType::kF32);
  const Tensor nhwc = channels_last(x);
  EXPECT_EQ(nhwc.strides(), (Shape{60, 1, 15, 3}));
  EXPECT_EQ(to_vector<float>(nhwc), to_vector<float>(x));
  EXPECT_TRUE(contiguous(nhwc, kChannelsLast).shares_storage_with(nhwc));
  const Tensor back = contiguous(nhwc);
  EXPECT_TRUE(back.is_contiguous());
  EXPECT_EQ(to_vector<float>(back), to_vector<float>(x));
  // clone and to keep the layout; reshape reads in row-major order.
  EXPECT_EQ(clone(nhwc).strides(), nhwc.strides());
  const Tensor half = to(nhwc, DType::kF16);
  EXPECT_TRUE(half.is_contiguous(kChannelsLast));
  EXPECT_EQ(to_vector<float>(half), to_vector<float>(to(x, DType::kF16)));
  EXPECT_EQ(to_vector<float>(reshape(nhwc, {2, 60})), to_vector<float>(x));
  EXPECT_TRUE(zeros_like(nhwc).is_contiguous(kChannelsLast));
  const Tensor ones_nhwc = ones_like(half);
  EXPECT_TRUE(ones_nhwc.is_contiguous(kChannelsLast));
  EXPECT_EQ(ones_nhwc.dtype(), DType::kF16);
  EXPECT_EQ(to_vector<float>(ones_nhwc), std::vector<float>(x.numel(), 1.0f));
  // 5-D volumes likewise.
  const Tensor volume = random_tensor(rng(), {2, 3, 2, 4, 5}, DType::kF64);
  EXPECT_EQ(to_vector<double>(channels_last(volume)), to_vector<double>(volume));
}

TEST_F(MemoryFormatTest, EveryUnaryOpKeepsTheLayoutAndTheValues) {
  const Tensor x = random_tensor(rng(), {2, 5, 3, 4}, DType::kF32, 0.1, 2);
  const Tensor nhwc = channels_last(x);
#define TS_CHECK_UNARY(name, Functor, rule)                                  \
  {                                                                          \
    const Tensor y = name(nhwc);                                             \
    EXPECT_TRUE(y.is_contiguous(kChannelsLast)) << #name;                    \
    expect_same_values(to(y, DType::kF64), to(name(x), DType::kF64), #name); \
  }
  TS_UNARY_OPS(TS_CHECK_UNARY)
#undef TS_CHECK_UNARY
}

TEST_F(MemoryFormatTest, EveryBinaryOpFollowsItsFirstFullSizeOperand) {
  const Tensor a = random_tensor(rng(), {2, 5, 3, 4}, DType::kF32, 0.1, 2);
  const Tensor b = random_tensor(rng(), {2, 5, 3, 4}, DType::kF32, 0.1, 2);
  const Tensor bias = random_tensor(rng(), {1, 5, 1, 1}, DType::kF32, 0.1, 2);
  const Tensor na = channels_last(a), nb = channels_last(b);
#define TS_CHECK_BINARY(name, Functor, rule)                                                       \
  {                                                                                                \
    const Tensor both = name(na, nb);                                                              \
    EXPECT_TRUE(both.is_contiguous(kChannelsLast)) << #name;                                       \
    expect_same_values(to(both, DType::kF64), to(name(a, b), DType::kF64), #name " both");         \
    const Tensor broadcast = name(bias, na);                                                       \
    EXPECT_TRUE(broadcast.is_contiguous(kChannelsLast)) << #name;                                  \
    expect_same_values(to(broadcast, DType::kF64), to(name(bias, a), DType::kF64), #name " bias"); \
    EXPECT_TRUE(name(a, nb).is_contiguous()) << #name;                                             \
    expect_same_values(to(name(a, nb), DType::kF64), to(name(a, b), DType::kF64), #name " mixed"); \
    EXPECT_TRUE(name(na, Scalar(0.5)).is_contiguous(kChannelsLast)) << #name;                      \
  }
  TS_BINARY_OPS(TS_CHECK_BINARY)
#undef TS_CHECK_BINARY
  EXPECT_TRUE(where(gt(na, 1.0), na, Scalar(0)).is_contiguous(kChannelsLast));
}

TEST_F(MemoryFormatTest, GradientsKeepTheGradientsLayout) {
  const Tensor x = random_tensor(rng(), {2, 5, 3, 4}, DType::kF32);
  const Tensor g = random_tensor(rng(), {2, 5, 3, 4}, DType::kF32);
  const Tensor y = relu(x);
  const Tensor dx = unary_grad(UnaryOp::kRelu, channels_last(g), channels_last(x), channels_last(y));
  EXPECT_TRUE(dx.is_contiguous(kChannelsLast));
  expect_same_values(dx, unary_grad(UnaryOp::kRelu, g, x, y), "relu grad");
  const Tensor da = binary_grad(BinaryOp::kMul, 0, channels_last(g), channels_last(x), channels_last(y), Tensor());
  EXPECT_TRUE(da.is_contiguous(kChannelsLast));
  expect_same_values(da, binary_grad(BinaryOp::kMul, 0, g, x, y, Tensor()), "mul grad");
}

TEST_F(MemoryFormatTest, ReductionsReadEitherLayout) {
  const Tensor x = random_tensor(rng(), {3, 4, 5, 6}, DType::kF64);
  const Tensor nhwc = channels_last(x);
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{0, 2, 3}, {1}, {2, 3}, {}}) {
    expect_same_values(sum(nhwc, dims), sum(x, dims), "sum", 1e-12);
  }
  expect_same_values(softmax(nhwc, 1), softmax(x, 1), "softmax", 1e-12);
}

TEST_F(MemoryFormatTest, CudaCopiesAndOpsKeepTheLayout) {
  TS_SKIP_WITHOUT_CUDA();
  const Tensor x = random_tensor(rng(), {2, 5, 3, 4}, DType::kF32);
  const Tensor nhwc = channels_last(x);
  const Tensor on_gpu = to(nhwc, Device::cuda(0));
  EXPECT_TRUE(on_gpu.is_contiguous(kChannelsLast));
  EXPECT_EQ(to_vector<float>(on_gpu), to_vector<float>(x));
  const Tensor y = exp(on_gpu) + to(x, Device::cuda(0));
  EXPECT_TRUE(y.is_contiguous(kChannelsLast));
  testing::expect_close_to_cpu(y, exp(nhwc) + x);
  const Tensor back = to(contiguous(on_gpu), Device::cpu());
  EXPECT_TRUE(back.is_contiguous());
  EXPECT_EQ(to_vector<float>(back), to_vector<float>(x));
}

}  // namespace
}  // namespace ts
