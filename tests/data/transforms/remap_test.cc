// remap, the gather behind every geometric transform, against a naive
// per-element reference on random index maps (repeats, reversals and -1
// fills), for each element size it moves (1, 2, 4 and 8 bytes), on
// contiguous, permuted and sliced inputs; its edge cases; errors that name
// the map and the tensor.
#include "data/transforms/remap.h"

#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data::transforms {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

// out's bytes as the definition gives them, one element at a time: the
// source element of each output index through the maps, or zeros.
std::vector<char> reference(const Tensor& x, const std::vector<std::vector<int64_t>>& maps) {
  const Tensor dense = contiguous(x);
  const auto* src = static_cast<const char*>(dense.raw_data());
  const int64_t item = x.itemsize();
  std::vector<int64_t> out_shape;
  int64_t count = 1;
  for (const auto& m : maps) {
    out_shape.push_back(static_cast<int64_t>(m.size()));
    count *= static_cast<int64_t>(m.size());
  }
  std::vector<char> out(count * item, 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, source = 0, source_stride = 1;
    bool fill = false;
    for (int64_t d = x.dim() - 1; d >= 0; --d) {
      const int64_t i = rest % out_shape[d];
      rest /= out_shape[d];
      const int64_t s = maps[d][i];
      if (s < 0) fill = true;
      source += s * source_stride;
      source_stride *= x.size(d);
    }
    if (!fill) std::memcpy(out.data() + flat * item, src + source * item, item);
  }
  return out;
}

std::vector<int64_t> random_map(int64_t size, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> length(1, 2 * size + 1), entry(-1, size - 1);
  std::vector<int64_t> map(length(rng));
  for (int64_t& m : map) m = entry(rng);
  return map;
}

void expect_matches_reference(const Tensor& x, const std::vector<std::vector<int64_t>>& maps) {
  SCOPED_TRACE(x.describe());
  const Tensor out = value_or_die(remap(x, maps));
  ASSERT_TRUE(out.is_contiguous());
  ASSERT_EQ(out.dtype(), x.dtype());
  for (int64_t d = 0; d < x.dim(); ++d) ASSERT_EQ(out.size(d), static_cast<int64_t>(maps[d].size()));
  const std::vector<char> want = reference(x, maps);
  ASSERT_EQ(want.size(), static_cast<size_t>(out.numel() * out.itemsize()));
  EXPECT_EQ(std::memcmp(out.raw_data(), want.data(), want.size()), 0);
}

TEST(RemapTest, RandomMapsMatchTheDefinitionForEveryElementSize) {
  std::mt19937 rng(7);
  for (DType dtype : {DType::kU8, DType::kF16, DType::kBF16, DType::kF32, DType::kI32, DType::kF64, DType::kI64}) {
    // Distinct bytes everywhere, so a misplaced element shows.
    const Tensor base = to(uniform({6, 5, 7}, -100, 100, {DType::kF64}), dtype);
    for (int trial = 0; trial < 4; ++trial) {
      for (const Tensor& x : {base, base.permute({2, 0, 1}), base.narrow(1, 1, 3).narrow(2, 2, 4)}) {
        std::vector<std::vector<int64_t>> maps;
        for (int64_t d = 0; d < x.dim(); ++d) maps.push_back(random_map(x.size(d), rng));
        expect_matches_reference(x, maps);
      }
    }
  }
}

TEST(RemapTest, AnEmptyMapKeepsTheDimWhole) {
  const Tensor x = arange(0, 24, 1, {DType::kF32}).view({2, 3, 4});
  const Tensor out = value_or_die(remap(x, {{}, {2, 0}, {}}));
  expect_matches_reference(x, {{0, 1}, {2, 0}, {0, 1, 2, 3}});
  EXPECT_EQ(out.shape(), (Shape{2, 2, 4}));
}

TEST(RemapTest, WindowMapsCropPadAndFlip) {
  EXPECT_EQ(window_map(5, 1, 3), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(window_map(3, -2, 6), (std::vector<int64_t>{-1, -1, 0, 1, 2, -1}));
  EXPECT_EQ(window_map(4, 0, 4, /*reversed=*/true), (std::vector<int64_t>{3, 2, 1, 0}));
  EXPECT_EQ(window_map(4, 2, 3, /*reversed=*/true), (std::vector<int64_t>{-1, 3, 2}));
}

TEST(RemapTest, ScalarsAndEmptyOutputs) {
  const Tensor scalar = scalar_tensor(2.5, {DType::kF64});
  EXPECT_EQ(item<double>(value_or_die(remap(scalar, {}))), 2.5);
  const Tensor x = ones({3, 2}, {DType::kF32});
  const Tensor empty_out = value_or_die(remap(x, {std::vector<int64_t>{}, {0}}));
  EXPECT_EQ(empty_out.shape(), (Shape{3, 1}));  // an empty map keeps the dim
  // All fills: zeros of the input's dtype.
  const Tensor filled = value_or_die(remap(x, {{-1, -1}, {-1}}));
  EXPECT_EQ(to_vector<float>(filled), (std::vector<float>{0, 0}));
}

TEST(RemapTest, ErrorsNameTheMapAndTheTensor) {
  const Tensor x = ones({3, 2}, {DType::kF32});
  expect_error(remap(x, {{0}}).status(), absl::StatusCode::kInvalidArgument, {"1 index maps for", "[3, 2]"});
  expect_error(remap(x, {{0, 3}, {}}).status(), absl::StatusCode::kInvalidArgument,
               {"index 3 out of range for dim 0", "[3, 2]"});
  expect_error(remap(x, {{}, {-2}}).status(), absl::StatusCode::kInvalidArgument, {"index -2 out of range for dim 1"});
  expect_error(remap(Tensor(), {}).status(), absl::StatusCode::kInvalidArgument, {"defined CPU tensor"});
}

}  // namespace
}  // namespace ts::data::transforms
