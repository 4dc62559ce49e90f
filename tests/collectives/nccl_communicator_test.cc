// The NCCL backend in a world of one rank (TCP rendezvous on loopback) against
// the CPU: every collective's result (also in debug mode), argument errors,
// the watchdog failing a collective that cannot finish, and Works that outlive
// their communicator. Skipped, visibly, without a CUDA device.
#include "collectives/nccl/nccl_communicator.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "collectives/rendezvous.h"
#include "gtest/gtest.h"
#include "tensor/cuda/stream.h"
#include "tests/tensor/testing.h"

namespace ts::collectives::nccl {
namespace {

using ::ts::testing::expect_equal;
using ::ts::testing::expect_error;
using ::ts::testing::ref_of;

std::unique_ptr<NcclCommunicator> single_rank_comm(CommunicatorOptions options = {}) {
  LaunchEnvironment env;  // rank 0 of 1
  auto rv = TcpRendezvous::connect("127.0.0.1", 0, 0, 1, absl::Seconds(30));
  EXPECT_TRUE(rv.ok()) << rv.status();
  if (!rv.ok()) return nullptr;
  auto comm = NcclCommunicator::create(
      env, 0, [&](const std::string& id) { return (*rv)->broadcast(id); }, options);
  EXPECT_TRUE(comm.ok()) << comm.status();
  return comm.ok() ? *std::move(comm) : nullptr;
}

class NcclCollectivesOfOneRank : public ::testing::TestWithParam<bool> {};

TEST_P(NcclCollectivesOfOneRank, MatchTheCpu) {
  TS_SKIP_WITHOUT_CUDA();
  CommunicatorOptions options;
  options.debug = GetParam();
  std::unique_ptr<NcclCommunicator> comm = single_rank_comm(options);
  ASSERT_NE(comm, nullptr);
  std::mt19937_64 rng(7);
  for (DType dtype : kAllDTypes) {
    const Tensor host = ::ts::testing::random_tensor(rng, {1001}, dtype, 0, 10);
    Tensor x = to(host, Device::cuda(0));
    ASSERT_OK(comm->allreduce(x, is_floating(dtype) ? ReduceOp::kAvg : ReduceOp::kSum).wait());
    ASSERT_OK(comm->broadcast(x, 0).wait());
    Tensor gathered = empty({1001}, {dtype, Device::cuda(0)});
    ASSERT_OK(comm->allgather(gathered, x).wait());
    Tensor scattered = empty({1001}, {dtype, Device::cuda(0)});
    ASSERT_OK(comm->reduce_scatter(scattered, gathered, ReduceOp::kMax).synchronize());
    expect_equal(to(scattered, Device::cpu()), ref_of(host), std::string(dtype_name(dtype)));
  }
  ASSERT_OK(comm->barrier().synchronize());
}

INSTANTIATE_TEST_SUITE_P(DebugOffAndOn, NcclCollectivesOfOneRank, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Debug" : "Plain"; });

TEST(NcclCommunicator, CpuTensorsAreErrors) {
  TS_SKIP_WITHOUT_CUDA();
  std::unique_ptr<NcclCommunicator> comm = single_rank_comm();
  ASSERT_NE(comm, nullptr);
  expect_error(comm->allreduce(ones({3}), ReduceOp::kSum).wait(), absl::StatusCode::kInvalidArgument,
               {"allreduce(sum)", "f32[3] on cpu", "wrong device", "works on cuda:0 tensors only"});
}

// Holds a stream until opened: a host function on it spins on the flag, so
// whatever is queued behind it cannot run (a stand-in for a peer that never
// arrives, which one GPU cannot have).
struct StreamGate {
  std::atomic<bool> open{false};
  static void CUDART_CB hold(void* gate) {
    while (!static_cast<StreamGate*>(gate)->open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

TEST(NcclCommunicator, WatchdogFailsACollectiveThatCannotFinishAndAborts) {
  TS_SKIP_WITHOUT_CUDA();
  // The first communicator of a process pays NCCL's one-time start
  // (library, NVML, topology), which may pass the 2 s below (under gVisor,
  // or with this test run alone); a throwaway one takes it first.
  ASSERT_NE(single_rank_comm(), nullptr);
  CommunicatorOptions options;
  // Also the bound on creating the communicator, which can take a few
  // hundred milliseconds.
  options.timeout = absl::Seconds(2);
  std::unique_ptr<NcclCommunicator> comm = single_rank_comm(options);
  ASSERT_NE(comm, nullptr);
  ASSERT_OK_AND_ASSIGN(cuda::Stream caller, cuda::Stream::create(0));
  // Static: the host function may read it after a failed ASSERT has left
  // the test, which opens it on the way out (see the runtime test's gate).
  static StreamGate gate;
  gate.open = false;
  Work stuck = Work::done();
  Tensor x;
  {
    cuda::StreamGuard on_caller(caller);
    x = ones({1000}, {DType::kF32, Device::cuda(0)});
    ASSERT_EQ(cudaLaunchHostFunc(caller.get(), &StreamGate::hold, &gate), cudaSuccess);
    stuck = comm->allreduce(x, ReduceOp::kSum);
  }
  const absl::Cleanup open_on_exit = [] { gate.open = true; };
  ASSERT_OK(comm->health());
  const absl::Time start = absl::Now();
  expect_error(stuck.synchronize(), absl::StatusCode::kDeadlineExceeded,
               {"allreduce(sum) #0", "f32[1000]", "timed out after", "NCCL watchdog", "aborted"});
  // The timeout (the watchdog polls every 50 ms) and a busy machine's slack:
  // what tells a timeout from a hang.
  EXPECT_LT(absl::Now() - start, options.timeout + absl::Seconds(10));
  // What a host that waited by other means (a copy of the result) asks.
  expect_error(comm->health(), absl::StatusCode::kDeadlineExceeded, {"allreduce(sum) #0", "NCCL watchdog"});
  gate.open = true;
  // Whatever the aborted operation left on the stream, the process must not
  // hang; later calls fail at once, naming the first failure.
  (void)caller.synchronize();
  expect_error(comm->allreduce(x, ReduceOp::kSum).wait(), absl::StatusCode::kDeadlineExceeded,
               {"allreduce(sum) #1", "aborted after an earlier failure", "NCCL watchdog"});
  expect_error(comm->barrier().synchronize(), absl::StatusCode::kDeadlineExceeded, {"barrier #2"});
  // A Work keeps what it reports: the failure outlives the communicator.
  comm.reset();
  expect_error(stuck.synchronize(), absl::StatusCode::kDeadlineExceeded, {"allreduce(sum) #0", "NCCL watchdog"});
  EXPECT_TRUE(stuck.is_completed());
}

TEST(NcclCommunicator, AWorkCanBeWaitedOnAfterItsCommunicatorIsGone) {
  TS_SKIP_WITHOUT_CUDA();
  std::unique_ptr<NcclCommunicator> comm = single_rank_comm();
  ASSERT_NE(comm, nullptr);
  const Tensor x = ones({1000}, {DType::kF32, Device::cuda(0)});
  Work work = comm->allreduce(x, ReduceOp::kSum);
  // Destruction finalizes the communicator, which completes the allreduce.
  comm.reset();
  ASSERT_OK(work.wait());
  ASSERT_OK(work.synchronize());
  EXPECT_TRUE(work.is_completed());
  expect_equal(to(x, Device::cpu()), ref_of(ones({1000})), "allreduce of one rank");
}

}  // namespace
}  // namespace ts::collectives::nccl
