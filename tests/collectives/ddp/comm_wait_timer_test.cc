// CommWaitTimer: on the CPU it adds the host time between begin() and end();
// on CUDA it adds the time the compute stream stood between them, which a
// host function holding the stream makes known (skipped without a GPU).
#include "collectives/ddp/comm_wait_timer.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <thread>

#include "gtest/gtest.h"
#include "tensor/cuda/stream.h"
#include "tests/tensor/testing.h"

namespace ts::collectives::ddp {
namespace {

constexpr auto kHold = std::chrono::milliseconds(30);

TEST(CommWaitTimer, AddsTheHostTimeBetweenBeginAndEndOnTheCpu) {
  CommWaitTimer timer(Device::cpu());
  ASSERT_OK_AND_ASSIGN(absl::Duration none, timer.total());
  EXPECT_EQ(none, absl::ZeroDuration());
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK(timer.begin());
    std::this_thread::sleep_for(kHold);
    ASSERT_OK(timer.end());
  }
  ASSERT_OK_AND_ASSIGN(absl::Duration total, timer.total());
  EXPECT_GE(total, 2 * absl::FromChrono(kHold));
}

void CUDART_CB hold_stream(void*) { std::this_thread::sleep_for(kHold); }

TEST(CommWaitTimer, AddsTheTimeTheStreamStoodOnCuda) {
  TS_SKIP_WITHOUT_CUDA();
  CommWaitTimer timer(Device::cuda(0));
  ASSERT_OK_AND_ASSIGN(cuda::Stream stream, cuda::Stream::create(0));
  cuda::StreamGuard on_stream(stream);
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK(timer.begin());
    // The host moves on at once: only the device's clock sees the stall.
    ASSERT_EQ(cudaLaunchHostFunc(stream.get(), &hold_stream, nullptr), cudaSuccess);
    ASSERT_OK(timer.end());
  }
  ASSERT_OK_AND_ASSIGN(absl::Duration total, timer.total());
  // Event timing resolves to about half a microsecond.
  EXPECT_GE(total, 2 * absl::FromChrono(kHold) - absl::Milliseconds(1));
  EXPECT_LT(total, absl::Seconds(10));
}

}  // namespace
}  // namespace ts::collectives::ddp
