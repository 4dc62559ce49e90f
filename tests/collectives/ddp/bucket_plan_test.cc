#include "collectives/ddp/bucket_plan.h"

#include "gtest/gtest.h"

namespace ts::collectives::ddp {
namespace {

std::vector<ParamInfo> f32_params(std::vector<int64_t> numels) {
  std::vector<ParamInfo> params;
  for (int64_t n : numels) params.push_back({n, DType::kF32, Device::cpu()});
  return params;
}

TEST(BucketPlanTest, ReverseOrderWithASmallFirstBucket) {
  // 4-byte elements; caps: first 40 bytes (10 elements), then 80 (20).
  const auto buckets = plan_buckets(f32_params({5, 5, 5, 5, 8, 12}), {40, 80});
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].params, (std::vector<int>{5}));  // 12 >= 10: closes at once
  // 8+5+5 = 18 < 20; the next one crosses the cap and closes the bucket.
  EXPECT_EQ(buckets[1].params, (std::vector<int>{4, 3, 2, 1}));
  EXPECT_EQ(buckets[1].offsets, (std::vector<int64_t>{0, 8, 13, 18}));
  EXPECT_EQ(buckets[1].numel, 23);
  EXPECT_EQ(buckets[2].params, (std::vector<int>{0}));
}

TEST(BucketPlanTest, AGivenFillOrderIsFollowed) {
  // Caps: first 40 bytes (10 elements), then 80 (20).
  const auto buckets = plan_buckets(f32_params({5, 5, 12}), {40, 80}, {0, 2, 1});
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].params, (std::vector<int>{0, 2}));  // 5 + 12 >= 10
  EXPECT_EQ(buckets[0].offsets, (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(buckets[1].params, (std::vector<int>{1}));
}

TEST(BucketPlanTest, HugeCapGivesOneBucketPerKind) {
  std::vector<ParamInfo> params = f32_params({3, 4});
  params.push_back({6, DType::kF16, Device::cpu()});
  const auto buckets = plan_buckets(params, {int64_t{1} << 30, int64_t{1} << 30});
  ASSERT_EQ(buckets.size(), 2u);
  for (const BucketSpec& b : buckets) {
    for (int p : b.params) EXPECT_EQ(params[p].dtype, b.dtype);
  }
}

TEST(BucketPlanTest, EachDtypeHasASmallFirstBucket) {
  // As PyTorch: the cap list is kept per (dtype, device). Caps: first 16
  // bytes, then 64. In reverse order: f16 8 elements (16 bytes) closes the
  // f16 first bucket; f32 4 elements (16 bytes) closes the f32 first bucket,
  // though an f16 bucket closed before it.
  std::vector<ParamInfo> params = f32_params({8, 4, 4});
  params.push_back({8, DType::kF16, Device::cpu()});
  const auto buckets = plan_buckets(params, {16, 64});
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].params, (std::vector<int>{3}));
  EXPECT_EQ(buckets[0].dtype, DType::kF16);
  EXPECT_EQ(buckets[1].params, (std::vector<int>{2}));
  EXPECT_EQ(buckets[2].params, (std::vector<int>{1, 0}));  // 48 bytes under the 64 cap: closed at the end
}

TEST(BucketPlanTest, EveryParameterInExactlyOneBucket) {
  const auto params = f32_params({1, 7, 300, 2, 2, 50, 9});
  const auto buckets = plan_buckets(params, {16, 64});
  std::vector<int> seen(params.size(), 0);
  for (const BucketSpec& b : buckets) {
    int64_t offset = 0;
    for (size_t k = 0; k < b.params.size(); ++k) {
      ++seen[b.params[k]];
      EXPECT_EQ(b.offsets[k], offset);
      offset += params[b.params[k]].numel;
    }
    EXPECT_EQ(b.numel, offset);
  }
  for (int count : seen) EXPECT_EQ(count, 1);
}

}  // namespace
}  // namespace ts::collectives::ddp
