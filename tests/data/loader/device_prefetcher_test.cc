// DevicePrefetcher: batches arrive on the GPU in order, with pinned host
// memory; argument errors are reported without a GPU too.
#include "data/loader/device_prefetcher.h"

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

std::unique_ptr<DataLoader> make_loader() {
  return value_or_die(DataLoader::create(std::make_shared<CountingDataset>(), std::make_unique<ShuffledSampler>(37, 4),
                                         {.batch_size = 8, .num_workers = 2}));
}

TEST(DevicePrefetcherTest, RejectsNonCudaDevicesAndMissingLoaders) {
  auto loader = make_loader();
  expect_error(DevicePrefetcher::create(loader.get(), Device::cpu()).status(), absl::StatusCode::kInvalidArgument,
               {"CUDA device", "cpu"});
  expect_error(DevicePrefetcher::create(nullptr, Device::cuda(0)).status(), absl::StatusCode::kInvalidArgument,
               {"loader"});
  if (!cuda::is_available()) {
    EXPECT_FALSE(DevicePrefetcher::create(loader.get(), Device::cuda(0)).ok());
  }
}

TEST(DevicePrefetcherTest, BatchesArriveOnTheDeviceInOrder) {
  TS_SKIP_WITHOUT_CUDA();
  auto loader = make_loader();
  EXPECT_TRUE(loader->pinned());
  ASSERT_OK_AND_ASSIGN(auto prefetcher, DevicePrefetcher::create(loader.get(), Device::cuda(0)));
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

}  // namespace
}  // namespace ts::data
