// Results of every collective of the MPI backend against float64 references
// built from all ranks' inputs (every rank regenerates every other rank's
// input), for every dtype and odd sizes including 0 and 1, plus async handles,
// argument errors, split communicators, the debug-mode mismatch report and
// debug-mode collectives started together keeping one order on every rank.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectives/mpi/mpi_communicator.h"
#include "collectives/mpi/mpi_runtime.h"
#include "collectives/mpi/schedules.h"
#include "gtest/gtest.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tensor/testing.h"

namespace ts::collectives {
namespace {

using mpitest::rank_rng;
using mpitest::world;
using ::ts::testing::expect_close;
using ::ts::testing::expect_equal;
using ::ts::testing::expect_error;
using ::ts::testing::Ref;
using ::ts::testing::ref_of;
using ::ts::testing::tolerance;
using ::ts::testing::value_or_die;

constexpr int64_t kSizes[] = {0, 1, 7, 1000, 40000, 300001};

uint64_t salt_of(DType dtype, int64_t n, int tag) {
  return (static_cast<uint64_t>(dtype) << 48) ^ (static_cast<uint64_t>(n) << 8) ^ tag;
}

// Rank q's input for one case: floats in [-1, 1), integers in [0, 10).
Tensor input_of(int q, int64_t n, DType dtype, uint64_t salt) {
  std::mt19937_64 rng = rank_rng(q, salt);
  return is_floating(dtype) ? ::ts::testing::random_tensor(rng, {n}, dtype, -1, 1)
                            : ::ts::testing::random_tensor(rng, {n}, dtype, 0, 10);
}

double combine(ReduceOp op, DType dtype, double a, double b) {
  if (op == ReduceOp::kMax || dtype == DType::kBool) return std::max(a, b);
  return a + b;
}

// The reduction of `count` consecutive ranks' inputs starting at rank 0.
Ref reduce_ref(int64_t n, DType dtype, ReduceOp op, uint64_t salt) {
  Ref out = ref_of(input_of(0, n, dtype, salt));
  for (int q = 1; q < world().world_size(); ++q) {
    const Ref r = ref_of(input_of(q, n, dtype, salt));
    for (int64_t i = 0; i < n; ++i) out.v[i] = combine(op, dtype, out.v[i], r.v[i]);
  }
  if (op == ReduceOp::kAvg) {
    for (double& v : out.v) v /= world().world_size();
  }
  return out;
}

void expect_matches(const Tensor& actual, const Ref& expected, const std::string& what) {
  if (is_floating(actual.dtype())) {
    // Each step of the reduction rounds its partial sum to the dtype (as
    // NCCL does), and partial sums of world_size values in [-1, 1) reach
    // world_size in magnitude: errors scale with that, not with the result.
    expect_close(actual, expected, tolerance(actual.dtype()), world().world_size(), what);
  } else {
    expect_equal(actual, expected, what);
  }
}

std::vector<ReduceOp> ops_for(DType dtype) {
  if (is_floating(dtype)) return {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax};
  return {ReduceOp::kSum, ReduceOp::kMax};
}

// Every rank must hold the same bytes: gathers them and compares.
void expect_identical_across_ranks(const Tensor& t, const std::string& what) {
  Tensor all = Tensor::allocate({world().world_size() * t.numel()}, t.dtype(), Device::cpu());
  ASSERT_OK(world().allgather(all, t).wait());
  const int64_t bytes = t.numel() * t.itemsize();
  if (bytes == 0) return;  // an empty tensor may have no storage for memcmp
  for (int q = 0; q < world().world_size(); ++q) {
    EXPECT_EQ(0, std::memcmp(static_cast<char*>(all.raw_data()) + q * bytes, t.raw_data(), bytes))
        << what << ": rank " << q << " differs from rank " << world().rank();
  }
}

TEST(MpiCollectives, RanksAndSizes) {
  EXPECT_GE(world().world_size(), 2);
  EXPECT_GE(world().rank(), 0);
  EXPECT_LT(world().rank(), world().world_size());
  // mpi_test.sh runs every rank on this one machine.
  EXPECT_EQ(world().local_size(), world().world_size());
  EXPECT_EQ(world().local_rank(), world().rank());
  EXPECT_EQ(world().backend_name(), "mpi");
}

TEST(MpiCollectives, AllreduceEveryDtypeAndSize) {
  for (DType dtype : kAllDTypes) {
    for (ReduceOp op : ops_for(dtype)) {
      for (int64_t n : kSizes) {
        const std::string what = absl::StrCat("allreduce(", reduce_op_name(op), ") ", dtype_name(dtype), "[", n, "]");
        SCOPED_TRACE(what);
        const uint64_t salt = salt_of(dtype, n, static_cast<int>(op));
        Tensor t = input_of(world().rank(), n, dtype, salt);
        ASSERT_OK(world().allreduce(t, op).wait());
        expect_matches(t, reduce_ref(n, dtype, op, salt), what);
        expect_identical_across_ranks(t, what);
      }
    }
  }
}

// The ring moves each chunk in segments of kSegmentBytes. Chunks of several
// segments with a short last one, and chunks of one segment plus one element
// (steps then alternate between one segment and two).
TEST(MpiCollectives, AllreduceChunksOfSeveralSegments) {
  const int64_t p = world().world_size();
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const int64_t segment = mpi::kSegmentBytes / dtype_size(dtype);
    for (int64_t n : {p * segment + 1, p * (5 * segment / 2) + 3}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg}) {
        const std::string what = absl::StrCat("allreduce(", reduce_op_name(op), ") ", dtype_name(dtype), "[", n, "]");
        SCOPED_TRACE(what);
        const uint64_t salt = salt_of(dtype, n, 200 + static_cast<int>(op));
        Tensor t = input_of(world().rank(), n, dtype, salt);
        ASSERT_OK(world().allreduce(t, op).wait());
        expect_matches(t, reduce_ref(n, dtype, op, salt), what);
        expect_identical_across_ranks(t, what);
      }
    }
  }
}

// Small allreduces (recursive doubling) go to peers on this machine in
// pieces of the shared-memory transport's eager limit: a few pieces with a
// short last one, and one piece plus one element.
TEST(MpiCollectives, AllreduceOfSeveralEagerPieces) {
  const int64_t piece = mpi::shared_memory_eager_bytes();
  ASSERT_GT(piece, 0) << "Open MPI's shared-memory eager limit was not found through MPI_T";
  for (DType dtype : {DType::kF32, DType::kF64, DType::kU8}) {
    const int64_t item = dtype_size(dtype);
    for (int64_t n : {(2 * piece + piece / 2) / item, piece / item + 1}) {
      ASSERT_LE(n * item, mpi::kSmallAllreduceBytes);
      const std::string what = absl::StrCat("allreduce(sum) ", dtype_name(dtype), "[", n, "]");
      SCOPED_TRACE(what);
      const uint64_t salt = salt_of(dtype, n, 300);
      Tensor t = input_of(world().rank(), n, dtype, salt);
      ASSERT_OK(world().allreduce(t, ReduceOp::kSum).wait());
      expect_matches(t, reduce_ref(n, dtype, ReduceOp::kSum, salt), what);
      expect_identical_across_ranks(t, what);
    }
  }
}

TEST(MpiCollectives, BroadcastEveryDtypeSizeAndRoot) {
  for (DType dtype : kAllDTypes) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{70001}}) {
      for (int root = 0; root < world().world_size(); ++root) {
        const uint64_t salt = salt_of(dtype, n, 100 + root);
        Tensor t = input_of(world().rank(), n, dtype, salt);
        ASSERT_OK(world().broadcast(t, root).wait());
        expect_equal(t, ref_of(input_of(root, n, dtype, salt)),
                     absl::StrCat("broadcast from ", root, " of ", dtype_name(dtype), "[", n, "]"));
      }
    }
  }
}

TEST(MpiCollectives, AllgatherEveryDtypeAndSize) {
  const int p = world().world_size();
  for (DType dtype : kAllDTypes) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{1001}, int64_t{100003}}) {
      const uint64_t salt = salt_of(dtype, n, 200);
      Ref expected{{p, n}, {}};
      for (int q = 0; q < p; ++q) {
        const Ref r = ref_of(input_of(q, n, dtype, salt));
        expected.v.insert(expected.v.end(), r.v.begin(), r.v.end());
      }
      const std::string what = absl::StrCat("allgather of ", dtype_name(dtype), "[", n, "]");
      Tensor out = Tensor::allocate({p, n}, dtype, Device::cpu());
      ASSERT_OK(world().allgather(out, input_of(world().rank(), n, dtype, salt)).wait());
      expect_equal(out, expected, what);
      // In place: the input is this rank's row of the output.
      Tensor in_place = Tensor::allocate({p, n}, dtype, Device::cpu());
      Tensor row = in_place.select(0, world().rank());
      copy_(row, input_of(world().rank(), n, dtype, salt));
      ASSERT_OK(world().allgather(in_place, row).wait());
      expect_equal(in_place, expected, what + " (in place)");
    }
  }
}

// An average is each rank's share summed (as NCCL's and DDP's): f16 values
// whose sum overflows average to themselves, on both allreduce paths (short:
// recursive doubling; long: the ring) and in reduce_scatter.
TEST(MpiCollectives, AverageOfF16DoesNotOverflowInTheSum) {
  const int p = world().world_size();
  for (int64_t n : {int64_t{3}, int64_t{300001}}) {
    Tensor t = full({n}, 40000.0, {DType::kF16});
    ASSERT_OK(world().allreduce(t, ReduceOp::kAvg).wait());
    EXPECT_EQ(item<double>(max(t)), 40000.0) << n << " elements";
    EXPECT_EQ(item<double>(min(t)), 40000.0) << n << " elements";
  }
  Tensor out = Tensor::allocate({5}, DType::kF16, Device::cpu());
  ASSERT_OK(world().reduce_scatter(out, full({5 * p}, 40000.0, {DType::kF16}), ReduceOp::kAvg).wait());
  EXPECT_EQ(to_vector<double>(out), std::vector<double>(5, 40000.0));
}

// An infinite timeout (TS_COLLECTIVES_TIMEOUT=inf) is no deadline: its sum
// with the start time wrapped, and every operation timed out at once. NaN
// is an error, as 0 is.
TEST(MpiCollectives, AnInfiniteTimeoutIsNoDeadline) {
  CommunicatorOptions options;
  options.timeout = absl::InfiniteDuration();
  const std::unique_ptr<mpi::MpiCommunicator> comm = value_or_die(mpi::MpiCommunicator::create(options));
  Tensor t = ones({300001});
  ASSERT_OK(comm->allreduce(t, ReduceOp::kSum).wait());
  EXPECT_EQ(item<double>(min(t)), world().world_size());
  setenv("TS_COLLECTIVES_TIMEOUT", "inf", 1);
  EXPECT_EQ(value_or_die(CommunicatorOptions::from_flags_and_env()).timeout, absl::InfiniteDuration());
  for (const char* bad : {"nan", "0"}) {
    setenv("TS_COLLECTIVES_TIMEOUT", bad, 1);
    expect_error(CommunicatorOptions::from_flags_and_env().status(), absl::StatusCode::kInvalidArgument,
                 {"TS_COLLECTIVES_TIMEOUT"});
  }
  unsetenv("TS_COLLECTIVES_TIMEOUT");
}

// A communicator destroyed on one rank while its allreduce is still in
// flight there (the Work dropped, as an error path does) finishes it first:
// MPI wrote into the freed buffers before, and the process crashed in
// MPI_Finalize. The other ranks, waiting on the same allreduce, get the sum.
TEST(MpiCollectives, ACommunicatorDestroyedWithWorkInFlightFinishesIt) {
  std::unique_ptr<mpi::MpiCommunicator> comm = value_or_die(mpi::MpiCommunicator::create({}));
  Tensor t = ones({4 << 20});
  if (world().rank() == 0) {
    { const Work dropped = comm->allreduce(t, ReduceOp::kSum); }
    comm.reset();
  } else {
    ASSERT_OK(comm->allreduce(t, ReduceOp::kSum).wait());
  }
  EXPECT_EQ(item<double>(min(t)), world().world_size());
  EXPECT_EQ(item<double>(max(t)), world().world_size());
}

// The host-value helpers the tasks agree through: every rank's values in rank
// order, and the root's one value on every rank (integers past 2^31 exact).
TEST(MpiCollectives, HostValuesGatheredAndBroadcast) {
  const int p = world().world_size(), me = world().rank();
  const std::vector<double> all = value_or_die(allgather_values(world(), Device::cpu(), {10.0 * me, 10.0 * me + 0.5}));
  ASSERT_EQ(all.size(), 2u * p);
  for (int q = 0; q < p; ++q) {
    EXPECT_EQ(all[2 * q], 10.0 * q);
    EXPECT_EQ(all[2 * q + 1], 10.0 * q + 0.5);
  }
  for (int root = 0; root < p; ++root) {
    const double mine = (int64_t{1} << 40) + me;
    EXPECT_EQ(value_or_die(broadcast_value(world(), Device::cpu(), mine, root)), (int64_t{1} << 40) + root);
  }
}

TEST(MpiCollectives, ReduceScatterEveryDtypeAndSize) {
  const int p = world().world_size();
  for (DType dtype : kAllDTypes) {
    for (ReduceOp op : ops_for(dtype)) {
      for (int64_t block : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{1000}, int64_t{70001}}) {
        const uint64_t salt = salt_of(dtype, block, 300 + static_cast<int>(op));
        const std::string what =
            absl::StrCat("reduce_scatter(", reduce_op_name(op), ") ", dtype_name(dtype), " blocks of ", block);
        Tensor input = input_of(world().rank(), p * block, dtype, salt);
        Tensor before = clone(input);
        Tensor out = Tensor::allocate({block}, dtype, Device::cpu());
        ASSERT_OK(world().reduce_scatter(out, input, op).wait());
        const Ref all = reduce_ref(p * block, dtype, op, salt);
        Ref mine{
            {block},
            std::vector<double>(all.v.begin() + world().rank() * block, all.v.begin() + (world().rank() + 1) * block)};
        expect_matches(out, mine, what);
        expect_equal(input, ref_of(before), what + ": input must be left unchanged");
      }
    }
  }
}

TEST(MpiCollectives, SendRecvAroundTheRing) {
  const int p = world().world_size();
  const int right = (world().rank() + 1) % p;
  const int left = (world().rank() + p - 1) % p;
  for (DType dtype : kAllDTypes) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{13}, int64_t{65537}}) {
      const uint64_t salt = salt_of(dtype, n, 400);
      Tensor out = input_of(world().rank(), n, dtype, salt);
      Tensor in = Tensor::allocate({n}, dtype, Device::cpu());
      const PeerTransfer transfers[] = {{PeerTransfer::Kind::kSend, out, right}, {PeerTransfer::Kind::kRecv, in, left}};
      ASSERT_OK(world().exchange(transfers).wait());
      expect_equal(in, ref_of(input_of(left, n, dtype, salt)),
                   absl::StrCat("recv of ", dtype_name(dtype), "[", n, "] from rank ", left));
    }
  }
  // The single-transfer helpers, between ranks 0 and 1.
  Tensor x = full({3}, Scalar(7.5), {DType::kF64});
  if (world().rank() == 0) ASSERT_OK(world().send(x, 1).wait());
  if (world().rank() == 1) {
    Tensor y = zeros({3}, {DType::kF64});
    ASSERT_OK(world().recv(y, 0).wait());
    expect_equal(y, ref_of(x), "recv from rank 0");
  }
  // A message shorter than the receiving tensor is an error naming the
  // transfer, not a receive that leaves the tail as it was.
  if (world().rank() == 0) ASSERT_OK(world().send(x, 1).wait());
  if (world().rank() == 1) {
    Tensor longer = zeros({5}, {DType::kF64});
    expect_error(world().recv(longer, 0).wait(), absl::StatusCode::kInvalidArgument,
                 {"recv f64[5] on cpu from rank 0 got 24 bytes where 40 were expected"});
  }
  // So is a longer one, without touching the memory past the receiving
  // tensor: Open MPI writes a message sent by rendezvous (over 4 KiB here)
  // past the receive buffer's end. The communicator works on.
  Tensor message = full({20000}, Scalar(1.5), {DType::kF64});
  if (world().rank() == 0) ASSERT_OK(world().send(message, 1).wait());
  if (world().rank() == 1) {
    Tensor buffer = zeros({20000}, {DType::kF64});
    Tensor shorter = buffer.narrow(0, 0, 5000);
    expect_error(world().recv(shorter, 0).wait(), absl::StatusCode::kInvalidArgument,
                 {"recv f64[5000] on cpu from rank 0 got 160000 bytes where 40000 were expected",
                  "the peer sent a tensor of another size"});
    expect_equal(buffer.narrow(0, 5000, 15000), ref_of(zeros({15000}, {DType::kF64})), "past the receiving tensor");
  }
  // And a message for an empty tensor: before, it posted no receive, and
  // the peer's message went to the next one.
  if (world().rank() == 0) ASSERT_OK(world().send(x, 1).wait());
  if (world().rank() == 1) {
    Tensor none = zeros({0}, {DType::kF64});
    expect_error(world().recv(none, 0).wait(), absl::StatusCode::kInvalidArgument,
                 {"recv f64[0] on cpu from rank 0 got 24 bytes where 0 were expected"});
  }
  if (world().rank() == 0) ASSERT_OK(world().send(x, 1).wait());
  if (world().rank() == 1) {
    Tensor y = zeros({3}, {DType::kF64});
    ASSERT_OK(world().recv(y, 0).wait());
    expect_equal(y, ref_of(x), "recv after the failed ones");
  }
}

// Two receives from one peer, started one after the other, take its
// messages in the order they were sent, whichever the engine polls first
// (communicator.h promises it). With receives matched by probe, a later
// receive's probe took the earlier one's message in about half the runs.
TEST(MpiCollectives, ReceivesFromOnePeerMatchInTheOrderStarted) {
  if (world().rank() > 1) return;
  for (int i = 0; i < 300; ++i) {
    Tensor first = full({3}, Scalar(double(i)), {DType::kF64});
    Tensor second = full({3}, Scalar(double(-i)), {DType::kF64});
    if (world().rank() == 0) {
      Work a = world().send(first, 1);
      Work b = world().send(second, 1);
      ASSERT_OK(b.wait());
      ASSERT_OK(a.wait());
    } else {
      Tensor x = zeros({3}, {DType::kF64});
      Tensor y = zeros({3}, {DType::kF64});
      Work a = world().recv(x, 0);
      Work b = world().recv(y, 0);
      ASSERT_OK(b.wait());
      ASSERT_OK(a.wait());
      expect_equal(x, ref_of(first), absl::StrCat("first receive, round ", i));
      expect_equal(y, ref_of(second), absl::StrCat("second receive, round ", i));
    }
  }
}

TEST(MpiCollectives, AsyncHandlesCompleteInAnyOrder) {
  constexpr int kCount = 4;
  std::vector<Tensor> tensors;
  std::vector<Work> works;
  for (int i = 0; i < kCount; ++i) {
    tensors.push_back(full({50000 + i}, Scalar(double(world().rank() + i)), {DType::kF32}));
    works.push_back(world().allreduce(tensors.back(), ReduceOp::kSum));
  }
  // Waiting on the last first must not deadlock the earlier ones.
  for (int i = kCount - 1; i >= 0; --i) ASSERT_OK(works[i].wait());
  for (int i = 0; i < kCount; ++i) {
    EXPECT_TRUE(works[i].is_completed());
    const int p = world().world_size();
    const double expected = p * (p - 1) / 2.0 + p * i;
    EXPECT_EQ(item<float>(tensors[i].select(0, 0)), expected) << "allreduce " << i;
    EXPECT_OK(works[i].wait());  // waiting again gives the same result
  }
  Work barrier = world().barrier();
  while (!barrier.is_completed()) {
  }
  EXPECT_OK(barrier.wait());
}

TEST(MpiCollectives, BadArgumentsAreErrorsNamingTheOp) {
  Tensor base = zeros({4, 6});
  Tensor strided = base.transpose(0, 1);
  expect_error(world().allreduce(strided, ReduceOp::kSum).wait(), absl::StatusCode::kInvalidArgument,
               {"allreduce(sum)", "f32[6, 4]", "not contiguous"});
  expect_error(world().allreduce(zeros({3}, {DType::kI32}), ReduceOp::kAvg).wait(), absl::StatusCode::kInvalidArgument,
               {"allreduce(avg)", "i32[3]", "not floating"});
  expect_error(world().broadcast(base, world().world_size()).wait(), absl::StatusCode::kInvalidArgument,
               {"broadcast", "root", "not a rank"});
  expect_error(world().allgather(zeros({5}), zeros({2})).wait(), absl::StatusCode::kInvalidArgument,
               {"allgather", "f32[5]", "f32[2]"});
  expect_error(world().send(base, -1).wait(), absl::StatusCode::kInvalidArgument, {"send", "destination -1"});
  expect_error(world().allreduce(Tensor(), ReduceOp::kMax).wait(), absl::StatusCode::kInvalidArgument,
               {"allreduce(max)", "undefined"});
  // None of the above started anything: the ranks are still in step.
  Tensor one = ones({1});
  ASSERT_OK(world().allreduce(one, ReduceOp::kSum).wait());
  EXPECT_EQ(item<float>(one), world().world_size());
}

TEST(MpiCollectives, SplitByParity) {
  const int color = world().rank() % 2;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Communicator> half, world().split(color, world().rank()));
  const int p = world().world_size();
  EXPECT_EQ(half->world_size(), (p - color + 1) / 2);
  EXPECT_EQ(half->rank(), world().rank() / 2);
  Tensor t = full({3}, Scalar(double(world().rank())), {DType::kI64});
  ASSERT_OK(half->allreduce(t, ReduceOp::kSum).wait());
  int64_t expected = 0;
  for (int q = color; q < p; q += 2) expected += q;
  EXPECT_EQ(item<int64_t>(t.select(0, 2)), expected);
}

// A split while a broadcast of two messages (past 1 GiB, MPI's int count)
// is in flight. When broadcasts were MPI_Ibcast calls, a split called
// before the second one on one rank and after it on another hung both.
TEST(MpiCollectives, SplitAfterABroadcastOfSeveralRounds) {
  constexpr int64_t kBytes = (int64_t{1} << 30) + 4096;
  Tensor big = full({kBytes}, Scalar(world().rank() == 0 ? 7 : 0), {DType::kU8});
  Work broadcast = world().broadcast(big, 0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Communicator> half, world().split(world().rank() % 2, world().rank()));
  ASSERT_OK(broadcast.wait());
  EXPECT_EQ(big.data<uint8_t>()[0], 7);
  EXPECT_EQ(big.data<uint8_t>()[kBytes - 1], 7);
  Tensor t = ones({2});
  ASSERT_OK(half->allreduce(t, ReduceOp::kSum).wait());
  EXPECT_EQ(item<double>(min(t)), half->world_size());
}

// A negative color on the last rank fails the split on every rank at once,
// naming it; before, that rank failed alone and the others waited out the
// timeout in the split.
TEST(MpiCollectives, ANegativeColorFailsTheSplitOnEveryRank) {
  const int last = world().world_size() - 1;
  expect_error(world().split(world().rank() == last ? -1 : 0, world().rank()).status(),
               absl::StatusCode::kInvalidArgument, {absl::StrCat("split: rank ", last, " passed color -1")});
  Tensor one = ones({1});  // still in step
  ASSERT_OK(world().allreduce(one, ReduceOp::kSum).wait());
  EXPECT_EQ(item<float>(one), world().world_size());
}

TEST(MpiCollectives, DebugModeReportsTheFirstMismatch) {
  CommunicatorOptions options;
  options.debug = true;
  options.timeout = absl::Seconds(60);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<mpi::MpiCommunicator> comm, mpi::MpiCommunicator::create(options));
  // Matching calls pass the check.
  Tensor a = ones({2, 5});
  ASSERT_OK(comm->allreduce(a, ReduceOp::kSum).wait());
  // Rank 1 passes a different shape; every rank reports the same mismatch.
  Tensor b = ones({world().rank() == 1 ? 12 : 10});
  expect_error(comm->allreduce(b, ReduceOp::kSum).wait(), absl::StatusCode::kFailedPrecondition,
               {"collective mismatch", "rank 0 called allreduce(sum) #1 on f32[10]",
                "rank 1 called allreduce(sum) #1 on f32[12]", "shape differ"});
  // A different op and dtype on the last rank.
  const bool last = world().rank() == world().world_size() - 1;
  Tensor c = ones({4}, {last ? DType::kF16 : DType::kF32});
  Work w = last ? comm->broadcast(c, 0) : comm->allreduce(c, ReduceOp::kMax);
  expect_error(
      w.wait(), absl::StatusCode::kFailedPrecondition,
      {"rank 0 called allreduce(max) #2 on f32[4]",
       absl::StrCat("rank ", world().world_size() - 1, " called broadcast(root 0) #2 on f16[4]"), "op, dtype differ"});
  // Nothing ran, so the communicator is still usable.
  Tensor d = ones({3});
  ASSERT_OK(comm->allreduce(d, ReduceOp::kSum).wait());
  EXPECT_EQ(item<float>(d.select(0, 0)), world().world_size());
}

// In debug mode every collective first allgathers the call's signature, and
// a broadcast's messages follow when that completes, which is at another
// moment on each rank. Broadcasts started together must still pair up
// alike on every rank (as MPI_Ibcast calls they used to cross: a truncation
// error, or data swapped between same-sized tensors).
TEST(MpiCollectives, DebugModeKeepsConcurrentBroadcastsInOrder) {
  CommunicatorOptions options;
  options.debug = true;
  options.timeout = absl::Seconds(60);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<mpi::MpiCommunicator> comm, mpi::MpiCommunicator::create(options));
  const int p = world().world_size();
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    std::vector<Tensor> tensors;
    std::vector<Work> works;
    for (int i = 0; i < 6; ++i) {
      const int root = i % p;
      const double value = world().rank() == root ? 100 * round + i : -1;
      tensors.push_back(full({i % 2 == 0 ? 16 : 2}, Scalar(value), {i % 2 == 0 ? DType::kF32 : DType::kI64}));
      works.push_back(comm->broadcast(tensors.back(), root));
    }
    works.push_back(comm->barrier());
    for (int i = static_cast<int>(works.size()) - 1; i >= 0; --i) ASSERT_OK(works[i].wait());
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(to_vector<double>(to(tensors[i], DType::kF64)),
                std::vector<double>(i % 2 == 0 ? 16 : 2, 100 * round + i))
          << "broadcast " << i;
    }
  }
}

}  // namespace
}  // namespace ts::collectives
