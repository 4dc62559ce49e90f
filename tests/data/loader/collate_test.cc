// collate(): stacking, padding of sequence fields, errors naming the field
// and shapes, and the host buffer pool's reuse of batch memory.
#include "data/loader/collate.h"

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

Example example(std::vector<float> image, Dims shape, int64_t label) {
  return Example{{from_vector<float>(image, shape), full({}, label, {DType::kI64})}};
}

TEST(CollateTest, StacksEachFieldAlongANewBatchDim) {
  const std::vector<Example> examples = {example({1, 2, 3, 4}, {2, 2}, 7), example({5, 6, 7, 8}, {2, 2}, 9)};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> batch, collate(examples));
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(to_vector<float>(batch[0]), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(batch[1].shape(), (Shape{2}));
  EXPECT_EQ(to_vector<int64_t>(batch[1]), (std::vector<int64_t>{7, 9}));
}

TEST(CollateTest, ReadsStridedViews) {
  const Tensor transposed = from_vector<float>({1, 2, 3, 4}, {2, 2}).transpose(0, 1);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> batch, collate(std::vector<Example>{Example{{transposed}}}));
  EXPECT_EQ(to_vector<float>(batch[0]), (std::vector<float>{1, 3, 2, 4}));
}

TEST(CollateTest, PadsSequenceFieldsToTheLongest) {
  const std::vector<Example> examples = {
      Example{{from_vector<int64_t>({1, 5, 2}, {3}), from_vector<int64_t>({1, 2}, {2})}},
      Example{{from_vector<int64_t>({1, 2}, {2}), from_vector<int64_t>({1, 6, 7, 2}, {4})}}};
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> batch, collate(examples, {.padded_fields = {0, 1}, .pad_value = 0}));
  EXPECT_EQ(batch[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(to_vector<int64_t>(batch[0]), (std::vector<int64_t>{1, 5, 2, 1, 2, 0}));
  EXPECT_EQ(batch[1].shape(), (Shape{2, 4}));
  EXPECT_EQ(to_vector<int64_t>(batch[1]), (std::vector<int64_t>{1, 2, 0, 0, 1, 6, 7, 2}));
}

TEST(CollateTest, ErrorsNameTheFieldTheExampleAndTheShapes) {
  expect_error(
      collate(std::vector<Example>{example({1, 2, 3, 4}, {2, 2}, 0), example({1, 2, 3, 4}, {4, 1}, 1)}).status(),
      absl::StatusCode::kInvalidArgument, {"field 0 of example 1", "f32[4, 1]", "f32[2, 2]"});
  Example other_dtype = example({1, 2}, {2}, 0);
  other_dtype.fields[1] = full({}, 1, {DType::kI32});
  expect_error(collate(std::vector<Example>{example({1, 2}, {2}, 0), other_dtype}).status(),
               absl::StatusCode::kInvalidArgument, {"field 1 of example 1", "i32[]", "i64[]"});
  Example short_example = example({1, 2}, {2}, 0);
  short_example.fields.pop_back();
  expect_error(collate(std::vector<Example>{example({1, 2}, {2}, 0), short_example}).status(),
               absl::StatusCode::kInvalidArgument, {"example 1 has 1 fields", "example 0 has 2"});
  expect_error(collate(std::vector<Example>{}).status(), absl::StatusCode::kInvalidArgument, {"no examples"});
  expect_error(collate(std::vector<Example>{example({1, 2}, {2}, 0)}, {.padded_fields = {1}}).status(),
               absl::StatusCode::kInvalidArgument, {"padded field 1", "scalar"});
  expect_error(collate(std::vector<Example>{example({1, 2}, {2}, 0)}, {.padded_fields = {5}}).status(),
               absl::StatusCode::kInvalidArgument, {"padded field 5 does not exist"});
}

TEST(HostBufferPoolTest, ReusesFreedBuffersOfTheSameSize) {
  std::shared_ptr<HostBufferPool> pool = HostBufferPool::create(/*pin=*/true);
  EXPECT_EQ(pool->pinned(), cuda::is_available());
  const std::vector<Example> examples = {example({1, 2, 3, 4}, {4}, 7)};
  void* first_address = nullptr;
  {
    ASSERT_OK_AND_ASSIGN(std::vector<Tensor> batch, collate(examples, {}, pool.get()));
    first_address = batch[0].raw_data();
    EXPECT_EQ(pool->stats().in_use_bytes, 4 * 4 + 8);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first_address) % 64, 0u);
  }
  EXPECT_EQ(pool->stats().in_use_bytes, 0);
  EXPECT_EQ(pool->stats().cached_bytes, 4 * 4 + 8);
  ASSERT_OK_AND_ASSIGN(std::vector<Tensor> again, collate(examples, {}, pool.get()));
  EXPECT_EQ(again[0].raw_data(), first_address);
  EXPECT_EQ(pool->stats().num_fresh_allocations, 2);  // one per field size, never more
  EXPECT_EQ(to_vector<float>(again[0]), (std::vector<float>{1, 2, 3, 4}));
}

// A copy from a pinned buffer to the GPU is asynchronous; the buffer may be
// refilled with the next batch as soon as the copy call returns, so the copy
// must have read it by then. The GPU is kept busy first, so that a copy left
// queued would read the refilled values.
TEST(HostBufferPoolTest, APinnedBufferCanBeRefilledOnceItsCopyToTheGpuReturns) {
  TS_SKIP_WITHOUT_CUDA();
  std::shared_ptr<HostBufferPool> pool = HostBufferPool::create(/*pin=*/true);
  ASSERT_TRUE(pool->pinned());
  const int64_t n = int64_t{1} << 22;
  Tensor host(value_or_die(pool->allocate(n * 4)), Shape{n}, Shape{1}, 0, DType::kF32);
  fill_(host, 1.0);
  const Tensor a = ones({4096, 4096}, {DType::kF32, Device::cuda(0)});
  Tensor busy = a;
  for (int i = 0; i < 8; ++i) busy = matmul(busy, a) * (1.0 / 4096);
  const Tensor on_gpu = to(host, Device::cuda(0));
  fill_(host, 2.0);
  EXPECT_EQ(to_vector<float>(sum(on_gpu)), (std::vector<float>{static_cast<float>(n)}));
}

TEST(HostBufferPoolTest, StoragesOutliveThePoolHandle) {
  Tensor kept;
  {
    std::shared_ptr<HostBufferPool> pool = HostBufferPool::create(false);
    kept = value_or_die(collate(std::vector<Example>{example({3, 4}, {2}, 1)}, {}, pool.get()))[0];
  }
  EXPECT_EQ(to_vector<float>(kept), (std::vector<float>{3, 4}));
}

}  // namespace
}  // namespace ts::data
