// The CUDA runtime layer: checked calls name the call, file and line; with no
// GPU every entry point says so (the runtime as a Status, tensor ops by
// throwing); with one, streams, events and the device allocator work.
#include <cudnn.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "gtest/gtest.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/cudnn_check.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/nccl_check.h"
#include "tensor/cuda/stream.h"
#include "tests/tensor/testing.h"

namespace ts::cuda {
namespace {

absl::Status failing_runtime_call() {
  RETURN_IF_CUDA_ERROR(cudaErrorInvalidValue);
  return absl::OkStatus();
}
absl::Status failing_cublas_call() {
  RETURN_IF_CUDA_ERROR(CUBLAS_STATUS_NOT_INITIALIZED);
  return absl::OkStatus();
}
absl::Status failing_cudnn_call() {
  RETURN_IF_CUDA_ERROR(CUDNN_STATUS_BAD_PARAM);
  return absl::OkStatus();
}
absl::Status failing_nccl_call() {
  RETURN_IF_CUDA_ERROR(ncclInvalidArgument);
  return absl::OkStatus();
}

TEST(CudaCheckTest, ErrorsNameTheCallFileAndLine) {
  const absl::Status runtime = failing_runtime_call();
  EXPECT_EQ(runtime.code(), absl::StatusCode::kInternal);
  for (const char* part : {"cudaErrorInvalidValue", "in cudaErrorInvalidValue", "runtime_test.cc:"}) {
    EXPECT_NE(std::string(runtime.message()).find(part), std::string::npos) << runtime;
  }
  const absl::Status cublas = failing_cublas_call();
  EXPECT_NE(std::string(cublas.message()).find("CUBLAS_STATUS_NOT_INITIALIZED"), std::string::npos) << cublas;
  const absl::Status cudnn = failing_cudnn_call();
  EXPECT_NE(std::string(cudnn.message()).find("CUDNN_STATUS_BAD_PARAM"), std::string::npos) << cudnn;
  const absl::Status nccl = failing_nccl_call();
  EXPECT_NE(std::string(nccl.message()).find("ncclInvalidArgument"), std::string::npos) << nccl;
  EXPECT_NE(std::string(nccl.message()).find("runtime_test.cc:"), std::string::npos) << nccl;
}

TEST(CudaCheckTest, OutOfMemoryIsResourceExhausted) {
  EXPECT_EQ(status_code_of(cudaErrorMemoryAllocation), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status_code_of(CUBLAS_STATUS_ALLOC_FAILED), absl::StatusCode::kResourceExhausted);
}

TEST(CudaDeviceTest, WithoutAGpuEverythingSaysSo) {
  if (is_available()) GTEST_SKIP() << "a CUDA device is present; this test covers machines without one";
  EXPECT_EQ(device_count(), 0);
  EXPECT_FALSE(unavailable_reason().empty());
  const absl::Status s = check_device(0);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(s.message()).find("cuda:0"), std::string::npos) << s;
  EXPECT_FALSE(Stream::create(0).ok());
  const absl::Status t = capture([] { empty({4}, {DType::kF32, Device::cuda(0)}); });
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.message()).find("no CUDA device"), std::string::npos) << t;
}

TEST(CudaDeviceTest, StreamsEventsAndAllocatorOnARealDevice) {
  TS_SKIP_WITHOUT_CUDA();
  EXPECT_FALSE(check_device(device_count()).ok());
  ASSERT_OK_AND_ASSIGN(DeviceProperties props, device_properties(0));
  EXPECT_GT(props.sm_count, 0);
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::create(0));
  ASSERT_OK_AND_ASSIGN(Event start, Event::create(true));
  ASSERT_OK_AND_ASSIGN(Event stop, Event::create(true));
  ASSERT_OK(start.record(s.get()));
  CachingAllocator& allocator = caching_allocator(0);
  const AllocatorStats before = allocator.stats();
  {
    StreamGuard guard(s);
    EXPECT_EQ(current_stream(0), s.get());
    Tensor x = ones({1 << 20}, {DType::kF32, Device::cuda(0)});
    Tensor total = sum(x);
    const float v = item<float>(total);
    EXPECT_EQ(v, static_cast<float>(1 << 20));
    EXPECT_GE(allocator.stats().allocated_bytes, before.allocated_bytes + (4 << 20));
  }
  EXPECT_EQ(current_stream(0), nullptr);
  ASSERT_OK(stop.record(s.get()));
  ASSERT_OK(stop.synchronize());
  ASSERT_OK_AND_ASSIGN(bool done, stop.query());
  EXPECT_TRUE(done);
  ASSERT_OK_AND_ASSIGN(float ms, start.elapsed_ms(stop));
  EXPECT_GE(ms, 0);
  // The same sizes again are served from the cache.
  const int64_t mallocs = allocator.stats().num_device_mallocs;
  {
    StreamGuard guard(s);
    Tensor x = ones({1 << 20}, {DType::kF32, Device::cuda(0)});
    ASSERT_OK(s.synchronize());
  }
  EXPECT_EQ(allocator.stats().num_device_mallocs, mallocs);
}

// A tensor used on a side stream (record_stream) may be freed after that
// Stream is dropped, as a tensor outlives the communicator that reduced it:
// the allocator then records an event on the stream, so a dropped stream is
// kept for the next create() instead of destroyed.
TEST(CudaDeviceTest, ADroppedStreamStaysValidForTheAllocator) {
  TS_SKIP_WITHOUT_CUDA();
  Tensor x = ones({1 << 20}, {DType::kF32, Device::cuda(0)});
  // The fill ran on the legacy default stream, with which the side stream
  // (non-blocking) does not synchronize.
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  cudaStream_t handle = nullptr;
  {
    ASSERT_OK_AND_ASSIGN(Stream side, Stream::create(0));
    handle = side.get();
    StreamGuard guard(side);
    EXPECT_EQ(item<float>(sum(x)), static_cast<float>(1 << 20));
    caching_allocator(0).record_stream(x.storage()->data(), side.get());
  }
  x = Tensor();  // the free records an event on the dropped stream
  EXPECT_EQ(cudaStreamSynchronize(handle), cudaSuccess);
  ASSERT_OK_AND_ASSIGN(Stream again, Stream::create(0));
  EXPECT_EQ(again.get(), handle);
  ASSERT_OK(again.synchronize());
}

// The runtime records a query's "not ready" as the thread's last error,
// which the launch checks read (cudaGetLastError): query() clears it.
TEST(CudaDeviceTest, ANotReadyQueryLeavesNoErrorForTheNextLaunchCheck) {
  TS_SKIP_WITHOUT_CUDA();
  ASSERT_OK_AND_ASSIGN(Stream s, Stream::create(0));
  // Static: the host function may read it after a failed ASSERT has left
  // the test, which opens it on the way out (a closed one would hold the
  // stream, and the process's exit, for ever).
  static std::atomic<bool> open;
  open = false;
  // Holds the stream until `open`, so the event after it cannot complete.
  const auto hold = [](void* flag) {
    while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  ASSERT_EQ(cudaLaunchHostFunc(s.get(), hold, &open), cudaSuccess);
  const absl::Cleanup open_on_exit = [] { open = true; };
  ASSERT_OK_AND_ASSIGN(Event e, Event::create());
  ASSERT_OK(e.record(s.get()));
  ASSERT_OK_AND_ASSIGN(const bool done, e.query());
  EXPECT_FALSE(done);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
  open = true;
  ASSERT_OK(e.synchronize());
}

}  // namespace
}  // namespace ts::cuda
