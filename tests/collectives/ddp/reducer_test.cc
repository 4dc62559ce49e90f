// The reducer's bucket mechanics on one process, against a communicator that
// records what it is asked to do and averages like a world of identical
// ranks (so values pass through unchanged). Multi-rank behaviour is tested
// under mpirun in ddp_mpi_test.
#include "collectives/ddp/reducer.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::collectives::ddp {
namespace {

using autograd::Variable;
using ::ts::testing::expect_error;
using ::ts::testing::expect_throws;

class RecordingCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  absl::string_view backend_name() const override { return "recording"; }
  absl::Status health() const override { return absl::OkStatus(); }
  Work allreduce(const Tensor& tensor, ReduceOp op) override {
    if (on_allreduce) on_allreduce();
    allreduced.push_back(tensor.numel());
    dtypes.push_back(tensor.dtype());
    return allreduce_status.ok() ? Work::done() : Work::failed(allreduce_status);
  }
  Work broadcast(const Tensor&, int) override { return Work::done(); }
  Work allgather(const Tensor& output, const Tensor& input) override {
    return Work::failed(absl::UnimplementedError("allgather"));
  }
  Work reduce_scatter(const Tensor&, const Tensor&, ReduceOp) override {
    return Work::failed(absl::UnimplementedError("reduce_scatter"));
  }
  Work exchange(absl::Span<const PeerTransfer>) override { return Work::failed(absl::UnimplementedError("exchange")); }
  Work barrier() override { return Work::done(); }
  absl::StatusOr<std::unique_ptr<Communicator>> split(int, int) override { return absl::UnimplementedError("split"); }

  std::vector<int64_t> allreduced;
  std::vector<DType> dtypes;
  absl::Status allreduce_status;  // what every allreduce's wait() returns
  std::function<void()> on_allreduce;
};

// Three "layers" y = ((x * w0) * w1) * w2 summed; parameters of 256 floats.
struct Chain {
  std::vector<GradientReducer::NamedParameter> params;
  Chain() {
    for (int i = 0; i < 3; ++i) {
      params.emplace_back("w" + std::to_string(i), Variable(full({256}, 1.0 + i), /*requires_grad=*/true));
    }
  }
  void step(std::vector<int> used = {0, 1, 2}) {
    Variable y(ones({256}));
    for (int i : used) y = y * params[i].second;
    autograd::sum(y).backward();
  }
};

TEST(ReducerTest, BucketCapsDecideTheNumberOfAllreduces) {
  // 256 floats = 1 KiB per parameter.
  for (const auto& [cap_kib, expected_calls] : std::vector<std::pair<double, size_t>>{{0.5, 3}, {2, 2}, {100, 1}}) {
    Chain chain;
    RecordingCommunicator comm;
    ASSERT_OK_AND_ASSIGN(auto reducer,
                         GradientReducer::create(chain.params, &comm, {cap_kib / 1024, cap_kib / 1024, std::nullopt}));
    ASSERT_OK(reducer->prepare_for_backward());
    chain.step();
    EXPECT_EQ(comm.allreduced.size(), expected_calls) << "cap " << cap_kib << " KiB";
    EXPECT_EQ(reducer->stats().steps, 1);
    // Values pass through the (identity) average unchanged: d/dw0 = w1*w2 = 6.
    EXPECT_EQ(to_vector<float>(chain.params[0].second.grad())[0], 6.0f);
    EXPECT_EQ(to_vector<float>(chain.params[2].second.grad())[0], 2.0f);
  }
}

TEST(ReducerTest, CompressionSendsReducedPrecision) {
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm, {25, 1, DType::kBF16}));
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step();
  ASSERT_EQ(comm.dtypes.size(), 1u);
  EXPECT_EQ(comm.dtypes[0], DType::kBF16);
  EXPECT_EQ(reducer->stats().bytes_sent, 3 * 256 * 2);
  EXPECT_EQ(chain.params[1].second.grad().dtype(), DType::kF32);
  EXPECT_EQ(to_vector<float>(chain.params[1].second.grad())[0], 3.0f);
}

TEST(ReducerTest, NoSyncAccumulatesThenTheNextBackwardSyncs) {
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm));
  reducer->set_sync_enabled(false);
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step();
  EXPECT_TRUE(comm.allreduced.empty());
  reducer->set_sync_enabled(true);
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step();
  EXPECT_EQ(comm.allreduced.size(), 1u);
  EXPECT_EQ(to_vector<float>(chain.params[0].second.grad())[0], 12.0f);
}

TEST(ReducerTest, UnusedParameterIsNamedAtTheNextForward) {
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm));
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step({0, 2});  // w1 unused: its bucket never fills
  EXPECT_TRUE(comm.allreduced.empty());
  expect_error(reducer->prepare_for_backward(), absl::StatusCode::kFailedPrecondition, {"rank 0", "no gradient", "w1"});
}

TEST(ReducerTest, UnusedParameterIsNamedBeforeTheOptimizerStep) {
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm));
  ASSERT_OK(reducer->check_backward_complete());  // nothing armed yet
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step({0, 2});
  expect_error(reducer->check_backward_complete(), absl::StatusCode::kFailedPrecondition,
               {"rank 0", "no gradient", "w1"});
  // The next step says so too, as it did before the check existed.
  expect_error(reducer->prepare_for_backward(), absl::StatusCode::kFailedPrecondition, {"w1"});
}

TEST(ReducerTest, ACompleteBackwardPassesTheCheck) {
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm));
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step();
  EXPECT_OK(reducer->check_backward_complete());
  // Under no_sync nothing is reduced, so nothing is missing.
  reducer->set_sync_enabled(false);
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step({0, 2});
  EXPECT_OK(reducer->check_backward_complete());
}

// A resumed run plans its buckets as the run it continues had planned them
// after its first step, before its own first backward.
TEST(ReducerTest, AReadyOrderPlanIsRestoredBeforeAnyBackward) {
  Chain first;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(first.params, &comm, {0.5 / 1024, 0.5 / 1024}));
  EXPECT_EQ(reducer->ready_order_plan(), std::nullopt);
  for (int step = 0; step < 2; ++step) {
    ASSERT_OK(reducer->prepare_for_backward());
    first.step({2, 1, 0});
    // Known from the first backward on, before the second step plans by it
    // (a checkpoint after one step keeps it).
    ASSERT_EQ(reducer->ready_order_plan(), (std::vector<int>{0, 1, 2})) << "after step " << step;
  }

  Chain resumed;
  ASSERT_OK_AND_ASSIGN(auto restored, GradientReducer::create(resumed.params, &comm, {0.5 / 1024, 0.5 / 1024}));
  ASSERT_OK(restored->plan_in_order(*reducer->ready_order_plan()));
  EXPECT_EQ(restored->bucket_parameter_names(), reducer->bucket_parameter_names());
  EXPECT_EQ(restored->ready_order_plan(), reducer->ready_order_plan());
  // Planned already: its first backward keeps the plan whatever order it sees.
  ASSERT_OK(restored->prepare_for_backward());
  resumed.step({0, 1, 2});
  ASSERT_OK(restored->prepare_for_backward());
  EXPECT_EQ(restored->bucket_parameter_names(), reducer->bucket_parameter_names());

  for (const std::vector<int>& bad : {std::vector<int>{0, 1}, {0, 1, 1}, {0, 1, 3}, {-1, 0, 1}}) {
    expect_error(restored->plan_in_order(bad), absl::StatusCode::kFailedPrecondition, {"rank 0", "not this model's"});
  }
}

// y = ((x * w2) * w1) * w0: backward finishes w0 first, the reverse of the
// registration order the first plan guesses. From the second step on, each
// bucket goes out as soon as its gradient is ready.
TEST(ReducerTest, BucketsFollowTheOrderOfTheFirstBackwardFromTheSecondStep) {
  Chain chain;
  int ready = 0;  // gradients finished so far in this backward
  for (auto& [name, p] : chain.params) p.add_grad_ready_hook([&ready](const Variable&) { ++ready; });
  RecordingCommunicator comm;
  std::vector<int> ready_at_launch;
  comm.on_allreduce = [&] { ready_at_launch.push_back(ready); };
  // 0.5 KiB caps: one 1 KiB parameter per bucket.
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm, {0.5 / 1024, 0.5 / 1024}));
  using Names = std::vector<std::vector<std::string>>;
  EXPECT_EQ(reducer->bucket_parameter_names(), (Names{{"w2"}, {"w1"}, {"w0"}}));
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    ready = 0;
    ready_at_launch.clear();
    for (auto& [name, p] : chain.params) p.clear_grad();
    ASSERT_OK(reducer->prepare_for_backward());
    chain.step({2, 1, 0});
    // The first plan's first bucket waits for the last gradient.
    const std::vector<int> want_ready = step == 0 ? std::vector<int>{3, 3, 3} : std::vector<int>{1, 2, 3};
    EXPECT_EQ(ready_at_launch, want_ready);
    const Names want_buckets = step == 0 ? Names{{"w2"}, {"w1"}, {"w0"}} : Names{{"w0"}, {"w1"}, {"w2"}};
    EXPECT_EQ(reducer->bucket_parameter_names(), want_buckets);
    // d/dw0 = w1 * w2 = 6 and d/dw2 = w0 * w1 = 2, whichever the plan.
    EXPECT_EQ(to_vector<float>(chain.params[0].second.grad())[0], 6.0f);
    EXPECT_EQ(to_vector<float>(chain.params[2].second.grad())[0], 2.0f);
  }
  EXPECT_EQ(reducer->stats().steps, 3);
}

TEST(ReducerTest, BackwardWithoutPrepareDoesNotSync) {
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm));
  chain.step();
  EXPECT_TRUE(comm.allreduced.empty());
}

TEST(ReducerTest, UnpreparedBackwardCheckStopsTheBackwardWithItsError) {
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm));
  int checks = 0;
  reducer->set_unprepared_backward_check([&checks] {
    ++checks;
    return absl::FailedPreconditionError("no step began");
  });
  expect_throws(absl::StatusCode::kFailedPrecondition, {"no step began"}, [&] { chain.step(); });
  EXPECT_EQ(checks, 1);  // the first gradient's hook stopped the backward
  EXPECT_TRUE(comm.allreduced.empty());
  // Under no_sync nothing is averaged, so nothing is missed: no check.
  reducer->set_sync_enabled(false);
  chain.step();
  reducer->set_sync_enabled(true);
  EXPECT_EQ(checks, 1);
  // A prepared backward syncs without asking.
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step();
  EXPECT_EQ(checks, 1);
  EXPECT_EQ(comm.allreduced.size(), 1u);
}

// A backward that leaves a bucket waiting (w2 unused) and a second backward
// in the same step, as accumulation without no_sync() does: the second
// gradient of a parameter stops the backward and says what to call.
TEST(ReducerTest, ASecondBackwardInOneStepIsNamed) {
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm));
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step({0, 1});
  expect_throws(absl::StatusCode::kFailedPrecondition,
                {"got a second gradient before prepare_for_backward()", "before every synchronized backward"}, [&] {
                  chain.step({0, 1});
                });
}

TEST(ReducerTest, FailedAllreduceStopsTheBackwardWithItsError) {
  Chain chain;
  RecordingCommunicator comm;
  comm.allreduce_status = absl::DeadlineExceededError("allreduce(avg) #3 timed out: rank 1 did not reach it");
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm));
  ASSERT_OK(reducer->prepare_for_backward());
  const absl::Status status = capture([&] { chain.step(); });
  expect_error(status, absl::StatusCode::kDeadlineExceeded, {"allreduce(avg) #3", "rank 1 did not reach it"});
  EXPECT_EQ(reducer->stats().steps, 0);
}

TEST(ReducerTest, BadOptionsAreErrors) {
  Chain chain;
  RecordingCommunicator comm;
  for (const double cap : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan(""), 1e13}) {
    expect_error(GradientReducer::create(chain.params, &comm, {cap, 1, std::nullopt}).status(),
                 absl::StatusCode::kInvalidArgument, {"bucket_cap_mb", "(0, 1048576]"});
  }
  expect_error(GradientReducer::create(chain.params, &comm, {25, 1, DType::kI32}).status(),
               absl::StatusCode::kInvalidArgument, {"wire_dtype", "i32"});
}

// Mixed precision's f16 gradients reduced in f32, and f32 ones compressed to
// bf16: the communicator sees the wire dtype, the gradients keep theirs.
TEST(ReducerTest, GradientsTravelInTheWireDtype) {
  for (const auto& [param_dtype, wire] :
       std::vector<std::pair<DType, DType>>{{DType::kF16, DType::kF32}, {DType::kF32, DType::kBF16}}) {
    Chain chain;
    for (auto& [name, p] : chain.params) p = Variable(to(p.data(), param_dtype), /*requires_grad=*/true);
    RecordingCommunicator comm;
    ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm, {25, 25, wire}));
    ASSERT_OK(reducer->prepare_for_backward());
    chain.step();
    ASSERT_EQ(comm.dtypes.size(), 1u);
    EXPECT_EQ(comm.dtypes[0], wire);
    EXPECT_EQ(reducer->stats().bytes_sent, 3 * 256 * dtype_size(wire));
    // d/dw0 = w1 * w2 = 6, exact in every dtype here.
    EXPECT_EQ(chain.params[0].second.grad().dtype(), param_dtype);
    EXPECT_EQ(to_vector<double>(chain.params[0].second.grad())[0], 6.0);
  }
  // A bucket already in the wire dtype is sent as it is.
  Chain chain;
  RecordingCommunicator comm;
  ASSERT_OK_AND_ASSIGN(auto reducer, GradientReducer::create(chain.params, &comm, {25, 25, DType::kF32}));
  ASSERT_OK(reducer->prepare_for_backward());
  chain.step();
  EXPECT_EQ(comm.dtypes, std::vector<DType>{DType::kF32});
}

}  // namespace
}  // namespace ts::collectives::ddp
