// StridedLayout: dims merge exactly when every operand is contiguous across
// them, and offsets() agrees with the operands' own strides everywhere.
#include "tensor/strided_layout.h"

#include <vector>

#include "tests/tensor/testing.h"

namespace ts {
namespace {

// Offset of element i (row-major over t's shape) from t's own strides.
int64_t naive_offset(const Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    off += (i % t.shape()[d]) * t.strides()[d];
    i /= t.shape()[d];
  }
  return off;
}

TEST(StridedLayoutTest, MergesContiguousDimsAndDropsOnes) {
  Tensor a = zeros({4, 1, 5, 6});
  auto flat = make_layout<2>({&a, &a});
  EXPECT_EQ(flat.ndim, 1);
  EXPECT_TRUE(flat.all_flat());
  Tensor t = a.transpose(2, 3);
  Tensor out = zeros({4, 1, 6, 5});
  auto mixed = make_layout<2>({&out, &t});
  EXPECT_EQ(mixed.ndim, 3);  // [4] and [6, 5] cannot merge for the transposed operand
  EXPECT_FALSE(mixed.all_flat());
  auto scalar = make_layout<2>({&out, nullptr});
  EXPECT_EQ(scalar.ndim, 1);  // a scalar operand never prevents merging
  // An empty operand has nothing to walk, whatever its strides.
  Tensor empty_out = zeros({4, 0, 3});
  Tensor empty_in = zeros({3, 0, 4}).permute({2, 1, 0});
  EXPECT_EQ(make_layout<2>({&empty_out, &empty_in}).numel, 0);
}

TEST(StridedLayoutTest, OffsetsMatchEveryOperandsStrides) {
  Tensor base = zeros({3, 8, 10});
  Tensor a = base.permute({2, 0, 1});  // [10, 3, 8]
  Tensor sliced = zeros({10, 3, 16});
  Tensor b = sliced.slice(2, 1, 16, 2);  // [10, 3, 8], stride 2
  Tensor row = zeros({1, 3, 1});
  Tensor c = row.expand({10, 3, 8});  // broadcast
  Tensor out = zeros({10, 3, 8});
  auto layout = make_layout<4>({&out, &a, &b, &c});
  const Tensor* ops[] = {&out, &a, &b, &c};
  for (int64_t i = 0; i < layout.numel; ++i) {
    int64_t offsets[4];
    layout.offsets(i, offsets);
    for (int k = 0; k < 4; ++k) ASSERT_EQ(offsets[k], naive_offset(*ops[k], i)) << "operand " << k << " element " << i;
  }
}

// A channels-last output is walked in its memory order, so same-layout
// operands become one flat loop, and every element is still visited once
// with offsets that agree for all operands.
TEST(StridedLayoutTest, WalksAChannelsLastOutputInItsMemoryOrder) {
  const Tensor out = empty({2, 3, 4, 5}, {DType::kF32, Device::cpu(), MemoryFormat::kChannelsLast});
  const Tensor in = empty({2, 3, 4, 5}, {DType::kF32, Device::cpu(), MemoryFormat::kChannelsLast});
  const auto flat = make_layout<2>({&out, &in});
  EXPECT_EQ(flat.ndim, 1);
  EXPECT_TRUE(flat.all_flat());

  const Tensor row_major = zeros({2, 3, 4, 5});
  const auto mixed = make_layout<2>({&out, &row_major});
  std::vector<int> visits(out.numel(), 0);
  for (int64_t i = 0; i < mixed.numel; ++i) {
    int64_t offsets[2];
    mixed.offsets(i, offsets);
    ASSERT_EQ(offsets[0], i) << "the output is walked in memory order";
    // Element (n, c, h, w) of the row-major operand sits at the output's
    // channels-last offset of the same (n, c, h, w).
    const int64_t n = offsets[1] / 60, c = offsets[1] / 20 % 3, h = offsets[1] / 5 % 4, w = offsets[1] % 5;
    ASSERT_EQ(offsets[0], ((n * 4 + h) * 5 + w) * 3 + c);
    ++visits[offsets[1]];
  }
  for (int count : visits) ASSERT_EQ(count, 1);
}

}  // namespace
}  // namespace ts
