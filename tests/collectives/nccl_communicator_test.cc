// The NCCL backend in a world of one rank (TCP rendezvous on loopback) against
// the CPU: every collective's result, stream ordering, and argument errors.
// Skipped, visibly, without a CUDA device.
#include "collectives/nccl/nccl_communicator.h"

#include "collectives/rendezvous.h"
#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::collectives::nccl {
namespace {

using ::ts::testing::expect_equal;
using ::ts::testing::expect_error;
using ::ts::testing::ref_of;

std::unique_ptr<NcclCommunicator> single_rank_comm() {
  LaunchEnvironment env;  // rank 0 of 1
  auto rv = TcpRendezvous::connect("127.0.0.1", 0, 0, 1, absl::Seconds(30));
  EXPECT_TRUE(rv.ok()) << rv.status();
  auto comm = NcclCommunicator::create(env, 0, [&](const std::string& id) { return (*rv)->broadcast(id); });
  EXPECT_TRUE(comm.ok()) << comm.status();
  return comm.ok() ? *std::move(comm) : nullptr;
}

TEST(NcclCommunicator, CollectivesOfOneRankMatchTheCpu) {
  TS_SKIP_WITHOUT_CUDA();
  std::unique_ptr<NcclCommunicator> comm = single_rank_comm();
  ASSERT_NE(comm, nullptr);
  std::mt19937_64 rng(7);
  for (DType dtype : kAllDTypes) {
    const Tensor host = ::ts::testing::random_tensor(rng, {1001}, dtype, 0, 10);
    Tensor x = *to(host, Device::cuda(0));
    ASSERT_OK(comm->allreduce(x, is_floating(dtype) ? ReduceOp::kAvg : ReduceOp::kSum).wait());
    ASSERT_OK(comm->broadcast(x, 0).wait());
    Tensor gathered = *empty({1001}, {dtype, Device::cuda(0)});
    ASSERT_OK(comm->allgather(gathered, x).wait());
    Tensor scattered = *empty({1001}, {dtype, Device::cuda(0)});
    ASSERT_OK(comm->reduce_scatter(scattered, gathered, ReduceOp::kMax).synchronize());
    expect_equal(*to(scattered, Device::cpu()), ref_of(host), std::string(dtype_name(dtype)));
  }
  ASSERT_OK(comm->barrier().synchronize());
}

TEST(NcclCommunicator, CpuTensorsAreErrors) {
  TS_SKIP_WITHOUT_CUDA();
  std::unique_ptr<NcclCommunicator> comm = single_rank_comm();
  ASSERT_NE(comm, nullptr);
  expect_error(comm->allreduce(*ones({3}), ReduceOp::kSum).wait(), absl::StatusCode::kInvalidArgument,
               {"allreduce(sum)", "f32[3] on cpu", "wrong device"});
}

}  // namespace
}  // namespace ts::collectives::nccl
