// The step clock: back-to-back steps share a boundary, a pause starts a new
// run, misuse is an error, and on CUDA a step lasts as long as the device
// stood in it, whatever the host clock says (skipped without a GPU).
#include "tasks/common/step_clock.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/cuda/stream.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

// A host clock the test moves by hand.
struct FakeClock {
  double now = 100;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

TEST(StepClockTest, BackToBackStepsShareABoundary) {
  FakeClock clock;
  StepClock steps(Device::cpu(), clock.fn());
  ASSERT_OK(steps.start());
  clock.now += 2;
  ASSERT_OK(steps.stop(10));
  clock.now += 1;  // the host preparing the next batch: counts in the next step
  ASSERT_OK(steps.start());
  clock.now += 3;
  ASSERT_OK(steps.stop(20));
  ASSERT_OK_AND_ASSIGN(std::vector<TimedStep> taken, steps.take());
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_DOUBLE_EQ(taken[0].seconds, 2);
  EXPECT_EQ(taken[0].samples, 10);
  EXPECT_DOUBLE_EQ(taken[1].seconds, 4);
  EXPECT_EQ(taken[1].samples, 20);
  ASSERT_OK_AND_ASSIGN(taken, steps.take());
  EXPECT_TRUE(taken.empty()) << "take() hands each step out once";
}

TEST(StepClockTest, PauseLeavesTheGapOut) {
  FakeClock clock;
  StepClock steps(Device::cpu(), clock.fn());
  ASSERT_OK(steps.start());
  clock.now += 1;
  ASSERT_OK(steps.stop(1));
  steps.pause();
  clock.now += 50;  // an evaluation
  ASSERT_OK(steps.start());
  clock.now += 1.5;
  ASSERT_OK(steps.stop(1));
  ASSERT_OK_AND_ASSIGN(std::vector<TimedStep> taken, steps.take());
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_DOUBLE_EQ(taken[1].seconds, 1.5);
}

TEST(StepClockTest, UnpairedCallsAreErrors) {
  FakeClock clock;
  StepClock steps(Device::cpu(), clock.fn());
  expect_error(steps.stop(1), absl::StatusCode::kFailedPrecondition, {"StepClock::stop", "no step"});
  ASSERT_OK(steps.start());
  expect_error(steps.start(), absl::StatusCode::kFailedPrecondition, {"StepClock::start", "not stopped"});
}

constexpr auto kHold = std::chrono::milliseconds(50);
void CUDART_CB hold_stream(void*) { std::this_thread::sleep_for(kHold); }

// On CUDA a step is timed by events on the compute stream: the host only
// queues the work, so the device time can exceed the host's. A host
// function holding the stream for kHold is a step the host clock (a fake
// that never moves) cannot see.
TEST(StepClockTest, CudaStepsAreTimedOnTheDevice) {
  TS_SKIP_WITHOUT_CUDA();
  const Device gpu = Device::cuda(0);
  ASSERT_OK_AND_ASSIGN(cuda::Stream stream, cuda::Stream::create(0));
  cuda::StreamGuard on_stream(stream);
  StepClock steps(gpu, [] { return 0.0; });
  ASSERT_OK(steps.start());
  ASSERT_EQ(cudaLaunchHostFunc(stream.get(), &hold_stream, nullptr), cudaSuccess);
  ASSERT_OK(steps.stop(1));
  ASSERT_OK_AND_ASSIGN(std::vector<TimedStep> taken, steps.take());
  ASSERT_EQ(taken.size(), 1u);
  // Event timing resolves to about half a microsecond.
  EXPECT_GE(taken[0].seconds, std::chrono::duration<double>(kHold).count() - 1e-3)
      << "the fake host clock reads 0: this is event time";
  EXPECT_EQ(taken[0].samples, 1);
}

}  // namespace
}  // namespace ts::tasks
