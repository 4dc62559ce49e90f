// DevicePrefetcher: batches arrive on the GPU in order, with pinned host
// memory, from a loader and from a source of strided views, restarting at
// any batch while copies are in flight; argument errors are reported without
// a GPU too.
#include "data/loader/device_prefetcher.h"

#include "data/loader/loader.h"
#include "gtest/gtest.h"
#include "tensor/cuda/stream.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

// get(i) = {f32 [3] = {i, i, i}, i64 scalar i}.
class CountingDataset : public Dataset {
 public:
  int64_t size() const override { return 37; }
  absl::StatusOr<Example> get(int64_t index) const override {
    return Example{{full({3}, static_cast<double>(index)), full({}, index, {DType::kI64})}};
  }
};

std::shared_ptr<DataLoader> make_loader() {
  return value_or_die(DataLoader::create(std::make_shared<CountingDataset>(), std::make_unique<ShuffledSampler>(37, 4),
                                         {.batch_size = 8, .num_workers = 2}));
}

TEST(DevicePrefetcherTest, RejectsNonCudaDevicesAndMissingSources) {
  auto loader = make_loader();
  expect_error(DevicePrefetcher::create(loader, Device::cpu()).status(), absl::StatusCode::kInvalidArgument,
               {"CUDA device", "cpu"});
  expect_error(DevicePrefetcher::create(nullptr, Device::cuda(0)).status(), absl::StatusCode::kInvalidArgument,
               {"batch source"});
  if (!cuda::is_available()) {
    EXPECT_FALSE(DevicePrefetcher::create(loader, Device::cuda(0)).ok());
  }
}

TEST(DevicePrefetcherTest, BatchesArriveOnTheDeviceInOrder) {
  TS_SKIP_WITHOUT_CUDA();
  auto loader = make_loader();
  EXPECT_TRUE(loader->pinned());
  ASSERT_OK_AND_ASSIGN(auto prefetcher, DevicePrefetcher::create(loader, Device::cuda(0)));
  // The caller's compute stream: the copies must be ordered before it.
  ASSERT_OK_AND_ASSIGN(cuda::Stream compute, cuda::Stream::create(0));
  cuda::StreamGuard guard(compute);
  for (int64_t epoch : {0, 1}) {
    ASSERT_OK(prefetcher->start_epoch(epoch));
    const std::vector<int64_t> order = shuffled_range(37, 4, epoch);
    int64_t seen = 0;
    while (true) {
      ASSERT_OK_AND_ASSIGN(std::optional<Batch> batch, prefetcher->next());
      if (!batch.has_value()) break;
      ASSERT_TRUE(batch->fields[0].device().is_cuda());
      // Work queued on the compute stream sees the copied data.
      const std::vector<float> values = to_vector<float>(batch->fields[0] * 2.0);
      const std::vector<int64_t> labels = to_vector<int64_t>(batch->fields[1]);
      for (size_t i = 0; i < labels.size(); ++i, ++seen) {
        EXPECT_EQ(labels[i], order[seen]);
        EXPECT_EQ(values[3 * i], 2.0f * order[seen]);
      }
    }
    EXPECT_EQ(seen, 37);
  }
}

// Batch k of an epoch: {the rows [k, k + 2) of a [10, 3] i64 stream, viewed
// transposed (strided, with an offset)}, in pageable memory.
class StridedWindows final : public BatchSource {
 public:
  absl::Status start_epoch(int64_t /*epoch*/, int64_t first_batch) override {
    next_ = first_batch;
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<Batch>> next() override {
    if (next_ == num_batches()) return std::nullopt;
    const int64_t k = next_++;
    return Batch{k, {}, {stream_.narrow(0, k, 2).transpose(0, 1)}};
  }
  int64_t num_batches() const override { return 9; }
  const Tensor& stream() const { return stream_; }

 private:
  Tensor stream_ = reshape(arange(0, 30, 1, {DType::kI64}), {10, 3});
  int64_t next_ = 0;
};

TEST(DevicePrefetcherTest, StridedViewsArriveAsTheyReadAndEpochsRestartAnywhere) {
  TS_SKIP_WITHOUT_CUDA();
  auto source = std::make_shared<StridedWindows>();
  ASSERT_OK_AND_ASSIGN(auto prefetcher, DevicePrefetcher::create(source, Device::cuda(0)));
  EXPECT_EQ(prefetcher->num_batches(), 9);
  const auto expect_batch = [&](int64_t k) {
    ASSERT_OK_AND_ASSIGN(std::optional<Batch> batch, prefetcher->next());
    ASSERT_TRUE(batch.has_value());
    EXPECT_EQ(batch->index, k);
    ASSERT_TRUE(batch->fields[0].device().is_cuda());
    EXPECT_EQ(to_vector<int64_t>(to(batch->fields[0], Device::cpu())),
              to_vector<int64_t>(contiguous(source->stream().narrow(0, k, 2).transpose(0, 1))));
  };
  // Restarted while one batch is handed out and the next is staged, as a
  // resumed run and every evaluation do.
  ASSERT_OK(prefetcher->start_epoch(0));
  expect_batch(0);
  expect_batch(1);
  ASSERT_OK(prefetcher->start_epoch(1, /*first_batch=*/4));
  for (int64_t k = 4; k < 9; ++k) expect_batch(k);
  ASSERT_OK_AND_ASSIGN(std::optional<Batch> end, prefetcher->next());
  EXPECT_FALSE(end.has_value());
  ASSERT_OK(prefetcher->start_epoch(0));
  ASSERT_OK(prefetcher->start_epoch(0));
  expect_batch(0);
}

}  // namespace
}  // namespace ts::data
