// Failure is an error, never a hang: a rank that arrives late, is in another
// collective (or a call ahead, its last one refused) or has exited makes the
// others fail within the timeout, with a
// message naming the collective, that rank and the elapsed time. The last
// test kills the last rank, so mpi_test.sh checks only the others' results
// (the late rank hands them its verdict on the first test).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectives/mpi/mpi_runtime.h"
#include "collectives/mpi/schedules.h"
#include "gtest/gtest.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using mpitest::world;
using ::ts::testing::expect_error;

constexpr int kTimeoutSeconds = 2;
constexpr absl::Duration kTimeout = absl::Seconds(kTimeoutSeconds);
// Timeout, the liveness probe's grace (timeout / 10, at least 100 ms) and
// slack for an oversubscribed machine: what tells a timeout from a hang.
constexpr absl::Duration kFailWithin = absl::Seconds(kTimeoutSeconds + 10);

std::unique_ptr<mpi::MpiCommunicator> short_timeout_comm() {
  CommunicatorOptions options;
  options.timeout = kTimeout;
  return *mpi::MpiCommunicator::create(options);
}

int last_rank() { return world().world_size() - 1; }

TEST(MpiFailure, LateRankIsNamedAndTheOthersGiveUp) {
  std::unique_ptr<mpi::MpiCommunicator> comm = short_timeout_comm();
  ASSERT_OK(comm->health());
  Tensor t = ones({100});
  const std::string missing = absl::StrCat("rank ", last_rank(), " did not reach it");
  if (comm->rank() == last_rank()) {
    // Late, however long the others take to give up: they reach this
    // barrier (on the world communicator) only after their allreduce failed,
    // which sent this rank the abort, so this rank's allreduce hears it.
    ASSERT_OK(world().barrier().wait());
    expect_error(comm->allreduce(t, ReduceOp::kSum).wait(), absl::StatusCode::kAborted,
                 {"aborted the communicator", "allreduce(sum) #0 of f32[100]", missing});
    expect_error(comm->health(), absl::StatusCode::kAborted, {missing});
  } else {
    const absl::Time start = absl::Now();
    const absl::Status status = comm->allreduce(t, ReduceOp::kSum).wait();
    const absl::Duration elapsed = absl::Now() - start;
    // The first rank to time out diagnoses; the others may hear its abort
    // first. Either way the message names the collective and the late rank.
    EXPECT_TRUE(status.code() == absl::StatusCode::kDeadlineExceeded || status.code() == absl::StatusCode::kAborted)
        << status;
    expect_error(status, status.code(), {"allreduce(sum) #0 of f32[100]", "timed out after", missing});
    EXPECT_LT(elapsed, kFailWithin);
    ASSERT_OK(world().barrier().wait());  // lets the late rank in
    // Later calls fail at once, naming the earlier failure, which the
    // communicator's health reports too.
    expect_error(comm->barrier().wait(), status.code(), {"barrier #1", "earlier failure", missing});
    expect_error(comm->health(), status.code(), {"allreduce(sum) #0 of f32[100]", missing});
  }
  // The last rank dies in the next test, so mpi_test.sh does not read its
  // results: it tells the others whether its checks held.
  Tensor late_rank_failed =
      full({1}, comm->rank() == last_rank() && ::testing::Test::HasFailure() ? 1 : 0, {DType::kI32});
  ASSERT_OK(world().allreduce(late_rank_failed, ReduceOp::kSum).wait());
  EXPECT_EQ(item<int32_t>(late_rank_failed), 0)
      << "the checks on rank " << last_rank() << " failed; its log says which";
}

// Rank 0 in an allreduce while the others are in a barrier at the same
// position (one rank took another branch): the ranks time out, and the
// message says which collective the other side is in (it said "every rank
// reached it" before the probe's answers were compared with the call).
TEST(MpiFailure, RanksInAnotherCollectiveAreNamed) {
  std::unique_ptr<mpi::MpiCommunicator> comm = short_timeout_comm();
  const absl::Time start = absl::Now();
  absl::Status status;
  if (comm->rank() == 0) {
    Tensor t = ones({5});
    status = comm->allreduce(t, ReduceOp::kSum).wait();
  } else {
    status = comm->barrier().wait();
  }
  EXPECT_LT(absl::Now() - start, kFailWithin);
  // The first rank to time out diagnoses; the others may hear its abort.
  const std::string own = comm->rank() == 0 ? "allreduce(sum) #0 of f32[5]" : "barrier #0";
  const std::string other = comm->rank() == 0 ? "is in barrier #0 of no tensor on rank 1"
                                              : "rank 0 is in allreduce(sum) #0 of f32[5] on cpu on rank 0";
  expect_error(status, status.code(), {"timed out after", "ranks disagree on the collective"});
  if (status.code() == absl::StatusCode::kDeadlineExceeded) expect_error(status, status.code(), {own, other});
  ASSERT_OK(world().barrier().wait());
}

// A call refused on one rank only (an average of integers, say) still takes
// its place in the order: the others' allreduce times out naming the rank
// that is one call ahead. Before, it took that rank's next allreduce as its
// pair and summed two different calls without a word.
TEST(MpiFailure, ACallRefusedOnOneRankStillTakesItsPlace) {
  std::unique_ptr<mpi::MpiCommunicator> comm = short_timeout_comm();
  Tensor floats = ones({5});
  absl::Status first;
  if (comm->rank() == last_rank()) {
    Tensor ints = ones({5}, {DType::kI32});
    first = comm->allreduce(ints, ReduceOp::kAvg).wait();
    EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument) << first;
  } else {
    first = comm->allreduce(floats, ReduceOp::kSum).wait();
  }
  const absl::Status second = comm->allreduce(floats, ReduceOp::kSum).wait();
  EXPECT_FALSE(first.ok());
  EXPECT_FALSE(second.ok());
  if (comm->rank() != last_rank() && first.code() == absl::StatusCode::kDeadlineExceeded) {
    expect_error(first, first.code(),
                 {"allreduce(sum) #0 of f32[5]", absl::StrCat("rank ", last_rank(), " is in allreduce(sum) #1")});
  }
  ASSERT_OK(world().barrier().wait());
}

// A communicator closed with an operation its peers never post (rank 0
// leaving on an error of its own) waits at most 10 s for it, then aborts,
// telling the peers, instead of holding the rank's error for the whole
// timeout (here a minute).
TEST(MpiFailure, ClosingWithAnOperationNoPeerPostsAbortsWithinSeconds) {
  CommunicatorOptions options;
  options.timeout = absl::Seconds(60);
  std::unique_ptr<mpi::MpiCommunicator> comm = *mpi::MpiCommunicator::create(options);
  if (comm->rank() == 0) {
    const absl::Time start = absl::Now();
    Tensor t = ones({100});
    { const Work dropped = comm->allreduce(t, ReduceOp::kSum); }
    comm.reset();
    EXPECT_LT(absl::Now() - start, absl::Seconds(10) + kFailWithin);
  }
  ASSERT_OK(world().barrier().wait());
  if (comm != nullptr) {
    // The others heard the abort.
    for (const absl::Time until = absl::Now() + kFailWithin; comm->health().ok() && absl::Now() < until;) {
      Tensor probe = ones({1});
      (void)comm->allreduce(probe, ReduceOp::kSum).wait();
    }
    expect_error(comm->health(), absl::StatusCode::kAborted, {"rank 0 closed the communicator with 1 operation(s)"});
  }
}

// Rank 0 passes another tensor than the others, without the debug check:
// every rank fails within seconds, not at its deadline, and the rank that
// saw it names the receive and the likely cause. MPI fails a longer message
// with a bare MPI_ERR_IN_STATUS and completes a shorter one quietly: rank 0
// of 7 against 9 floats had returned OK with garbage in its last 2.
TEST(MpiFailure, TensorsOfDifferentSizesFailOnEveryRank) {
  struct Case {
    int64_t numel_on_rank_0, numel;
    DType dtype_on_rank_0;
  };
  // Recursive doubling (small; one eager piece's worth of floats against
  // two: the receiver of one had taken the first of two for all of it), the
  // ring (large; on 3 ranks small too, where 1 element against 2 leaves
  // some chunks empty on one side only), an empty tensor, f16 against f32.
  const int64_t piece = mpi::shared_memory_eager_bytes() / 4;
  // Ring chunks of exactly one segment against one segment and an element,
  // and against two segments (the smaller rank had taken the larger one's
  // second segment for its allgather's message).
  constexpr int64_t kSegmentFloats = mpi::kSegmentBytes / 4;
  ASSERT_GT(piece, 0) << "Open MPI's shared-memory eager limit was not found through MPI_T";
  for (const Case c :
       {Case{7, 9, DType::kF32}, Case{9, 7, DType::kF32}, Case{piece, 2 * piece, DType::kF32},
        Case{2 * piece, piece, DType::kF32}, Case{300000, 300001, DType::kF32},
        Case{2 * kSegmentFloats, 2 * kSegmentFloats + 2, DType::kF32},
        Case{2 * kSegmentFloats, 4 * kSegmentFloats, DType::kF32}, Case{1, 2, DType::kF32}, Case{2, 1, DType::kF32},
        Case{0, 5, DType::kF32}, Case{5, 0, DType::kF32}, Case{100000, 100000, DType::kF16}}) {
    const std::string what =
        absl::StrCat(dtype_name(c.dtype_on_rank_0), "[", c.numel_on_rank_0, "] on rank 0 against f32[", c.numel, "]");
    CommunicatorOptions options;
    options.timeout = absl::Seconds(60);
    std::unique_ptr<mpi::MpiCommunicator> comm = *mpi::MpiCommunicator::create(options);
    const bool first = comm->rank() == 0;
    Tensor t = ones({first ? c.numel_on_rank_0 : c.numel}, {first ? c.dtype_on_rank_0 : DType::kF32});
    const absl::Time start = absl::Now();
    const absl::Status status = comm->allreduce(t, ReduceOp::kSum).wait();
    EXPECT_LT(absl::Now() - start, kFailWithin) << what;
    // The rank that saw it, or one that heard its abort.
    EXPECT_TRUE(status.code() == absl::StatusCode::kInvalidArgument || status.code() == absl::StatusCode::kAborted)
        << what << ": " << status;
    expect_error(status, status.code(),
                 {"allreduce(sum) #0", "the receive from rank", " bytes",
                  "the ranks passed tensors of different sizes or dtypes"});
    ASSERT_OK(world().barrier().wait());
  }
}

// The same for a broadcast, but for the root: its sends may be done before
// any receiver looks. Open MPI's MPI_Ibcast, which broadcasts were before,
// gave the receivers a bare MPI_ERR_IN_STATUS and corrupted the heap (the
// next MPI_Ibarrier aborted in malloc).
TEST(MpiFailure, BroadcastsOfDifferentSizesFailOnEveryOtherRank) {
  struct Case {
    int64_t numel_on_root, numel;
  };
  for (const Case c : {Case{2, 1}, Case{1, 2}, Case{200000, 100000}}) {
    const std::string what = absl::StrCat("f32[", c.numel_on_root, "] on the root against f32[", c.numel, "]");
    CommunicatorOptions options;
    options.timeout = absl::Seconds(60);
    std::unique_ptr<mpi::MpiCommunicator> comm = *mpi::MpiCommunicator::create(options);
    Tensor t = ones({comm->rank() == 0 ? c.numel_on_root : c.numel});
    const absl::Time start = absl::Now();
    const absl::Status status = comm->broadcast(t, 0).wait();
    EXPECT_LT(absl::Now() - start, kFailWithin) << what;
    if (comm->rank() != 0 || !status.ok()) {
      EXPECT_TRUE(status.code() == absl::StatusCode::kInvalidArgument || status.code() == absl::StatusCode::kAborted)
          << what << ": " << status;
      expect_error(status, status.code(),
                   {"broadcast(root 0) #0", "the ranks passed tensors of different sizes or dtypes"});
    }
    ASSERT_OK(world().barrier().wait());
  }
}

// A point-to-point exchange whose peer never posts its side times out
// naming each transfer still waiting: the send (too large to go eagerly)
// and the receive (its message never came).
TEST(MpiFailure, ExchangeTimeoutNamesTheTransfersStillWaiting) {
  std::unique_ptr<mpi::MpiCommunicator> comm = short_timeout_comm();
  if (comm->rank() == 0) {
    Tensor out = ones({100000});
    Tensor in = zeros({5});
    const PeerTransfer transfers[] = {{PeerTransfer::Kind::kSend, out, 1}, {PeerTransfer::Kind::kRecv, in, 1}};
    const absl::Time start = absl::Now();
    expect_error(
        comm->exchange(transfers).wait(), absl::StatusCode::kDeadlineExceeded,
        {"timed out after", "still waiting to send f32[100000] on cpu to rank 1, recv f32[5] on cpu from rank 1"});
    EXPECT_LT(absl::Now() - start, kFailWithin);
  }
  ASSERT_OK(world().barrier().wait());
}

TEST(MpiFailure, ExitedRankIsNamed) {
  std::unique_ptr<mpi::MpiCommunicator> comm = short_timeout_comm();
  ASSERT_OK(comm->barrier().wait());
  if (comm->rank() == last_rank()) {
    std::fflush(nullptr);
    _exit(0);  // dies without finalizing, as a crashed rank would
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Tensor t = zeros({7, 3}, {DType::kBF16});
  const absl::Time start = absl::Now();
  const absl::Status status = comm->allreduce(t, ReduceOp::kMax).wait();
  EXPECT_LT(absl::Now() - start, kFailWithin);
  expect_error(
      status, status.code(),
      {"allreduce(max) #1 of bf16[7, 3]", "timed out after", absl::StrCat("rank ", last_rank(), " did not reach it")});
}

}  // namespace
}  // namespace ts::collectives
