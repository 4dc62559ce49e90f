// The GPU batch transforms against the CPU transforms, sample by sample, on
// random inputs and random per-sample parameters (skipped without a GPU);
// argument errors are checked everywhere.
#include "data/transforms/gpu_batch_ops.h"

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data::transforms {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

class GpuBatchOpsTest : public ::ts::testing::SeededTest {};

// Sample n of a batch, on the host.
Tensor host_sample(const Tensor& batch, int64_t n) { return to(batch.select(0, n), Device::cpu()); }

template <typename T>
void expect_same_samples(const Tensor& gpu, const std::vector<Tensor>& cpu) {
  ASSERT_EQ(gpu.size(0), static_cast<int64_t>(cpu.size()));
  for (size_t n = 0; n < cpu.size(); ++n) {
    EXPECT_EQ(to_vector<T>(host_sample(gpu, n)), to_vector<T>(cpu[n])) << "sample " << n;
  }
}

TEST_F(GpuBatchOpsTest, NormalizeMatchesTheCpuBitForBit) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::kU8, DType::kF32}) {
    Tensor host = ::ts::testing::random_tensor(rng(), {5, 3, 7, 9}, dtype, 0, 255);
    const std::vector<float> mean = {0.4f, 0.5f, 0.6f}, stddev = {0.2f, 0.25f, 0.3f};
    ASSERT_OK_AND_ASSIGN(Tensor gpu, normalize_batch(to(host, Device::cuda(0)), mean, stddev));
    std::vector<Tensor> cpu;
    for (int64_t n = 0; n < 5; ++n) cpu.push_back(value_or_die(normalize_image(host_sample(host, n), mean, stddev)));
    expect_same_samples<float>(gpu, cpu);
  }
}

TEST_F(GpuBatchOpsTest, CropFlipMatchesTheCpu) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::kU8, DType::kF32, DType::kI64}) {
    Tensor host = ::ts::testing::random_tensor(rng(), {6, 3, 28, 30}, dtype, 0, 100);
    std::vector<CropFlip> params;
    for (uint64_t n = 0; n < 6; ++n) {
      RandomStream stream = RandomStream::for_sample(seed(), 0, n);
      CropFlip p = draw_crop(stream, 28, 30, 32, 32, 4);
      p.flip = stream.bernoulli(0.5);
      params.push_back(p);
    }
    ASSERT_OK_AND_ASSIGN(Tensor gpu, crop_flip_batch(to(host, Device::cuda(0)), 32, 32, 4, params));
    std::vector<Tensor> cpu;
    for (int64_t n = 0; n < 6; ++n)
      cpu.push_back(value_or_die(crop_flip_image(host_sample(host, n), 32, 32, 4, params[n])));
    expect_same_samples<double>(gpu, cpu);
  }
}

TEST_F(GpuBatchOpsTest, VolumeFlipsAndTurnsMatchTheCpu) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::kU8, DType::kF32}) {
    Tensor host = ::ts::testing::random_tensor(rng(), {8, 2, 5, 6, 6}, dtype, 0, 100);
    std::vector<FlipRot3d> params;
    for (int n = 0; n < 8; ++n) {
      params.push_back({.flip_d = (n & 1) != 0, .flip_h = (n & 2) != 0, .flip_w = (n & 4) != 0, .rot90 = n % 4});
    }
    ASSERT_OK_AND_ASSIGN(Tensor gpu, flip_rotate_volume_batch(to(host, Device::cuda(0)), params));
    std::vector<Tensor> cpu;
    for (int64_t n = 0; n < 8; ++n) cpu.push_back(value_or_die(flip_rotate_volume(host_sample(host, n), params[n])));
    expect_same_samples<double>(gpu, cpu);
  }
}

TEST(GpuBatchOpsErrorsTest, RejectHostBatches) {
  Tensor host = zeros({2, 1, 4, 4});
  expect_error(normalize_batch(host, {0.f}, {1.f}).status(), absl::StatusCode::kInvalidArgument,
               {"normalize_batch", "CUDA batch", "f32[2, 1, 4, 4] on cpu"});
  expect_error(crop_flip_batch(host, 4, 4, 0, {}).status(), absl::StatusCode::kInvalidArgument, {"crop_flip_batch"});
  expect_error(flip_rotate_volume_batch(host, {}).status(), absl::StatusCode::kInvalidArgument,
               {"flip_rotate_volume_batch"});
}

TEST(GpuBatchOpsErrorsTest, RejectWrongParameterCountsAndOffsets) {
  TS_SKIP_WITHOUT_CUDA();
  Tensor device = zeros({2, 1, 4, 4}, {DType::kF32, Device::cuda(0)});
  expect_error(crop_flip_batch(device, 4, 4, 0, std::vector<CropFlip>(3)).status(), absl::StatusCode::kInvalidArgument,
               {"3 parameter sets"});
  expect_error(crop_flip_batch(device, 4, 4, 0, std::vector<CropFlip>{{1, 0}, {0, 0}}).status(),
               absl::StatusCode::kInvalidArgument, {"sample 0", "offset (1, 0)"});
}

}  // namespace
}  // namespace ts::data::transforms
