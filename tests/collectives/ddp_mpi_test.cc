// DistributedDataParallel across ranks (2 and 4 under mpirun): training
// with each rank on its share of a batch ends with the parameters of one
// process training on the whole batch, for several bucket sizes (same
// result, allreduce counts as the bucket plan says), with no_sync
// accumulation, and with broadcast_buffers on and off; buckets planned again
// in rank 0's order of gradients; a training backward that no begin_step()
// armed throws instead of leaving the ranks apart; ranks that train different
// parameters are refused.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/variable.h"
#include "collectives/ddp/distributed_data_parallel.h"
#include "gtest/gtest.h"
#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/losses.h"
#include "nn/pooling.h"
#include "nn/relu.h"
#include "nn/sequential.h"
#include "optim/sgd.h"
#include "tensor/ops.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tensor/testing.h"

namespace ts::collectives::ddp {
namespace {

using autograd::Variable;
using ::ts::testing::expect_throws;
using ::ts::testing::value_or_die;

constexpr int64_t kSamplesPerRank = 4;
constexpr int kSteps = 3;

// An MLP: the per-sample loss is independent of the other samples, so
// averaging the ranks' gradients equals the whole batch's gradient.
std::shared_ptr<nn::Sequential> mlp(uint64_t seed) {
  manual_seed(seed);
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(6, 32), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Linear>(32, 16), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Linear>(16, 3));
}

// The job's whole batch, identical on every rank.
struct Batch {
  Tensor x, y;
  Batch slice(int64_t start, int64_t count) const { return {x.narrow(0, start, count), y.narrow(0, start, count)}; }
};

Batch global_batch(int64_t size, int step) {
  Generator g(mpitest::job_seed() + step);
  return {randn({size, 6}, {}, &g), to(rand({size}, {}, &g) * 2.999, DType::kI64)};
}

// The model's loss on `b`, backpropagated. Under DDP, begin_step() comes first.
void backward_on(nn::Sequential& model, const Batch& b) {
  nn::cross_entropy(model.forward(Variable(b.x)), b.y).backward();
}

optim::Sgd sgd_for(const nn::Module& model) {
  optim::SgdOptions options;
  options.lr = 0.1;
  options.momentum = 0.9;
  return optim::Sgd(model.named_parameters(), options);
}

// Element by element, to 1e-5 relative (absolute near zero).
void expect_near(const Tensor& actual, const Tensor& expected, const std::string& what) {
  const std::vector<float> a = to_vector<float>(actual);
  const std::vector<float> e = to_vector<float>(expected);
  ASSERT_EQ(a.size(), e.size()) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_NEAR(a[k], e[k], 1e-5 * (1 + std::abs(e[k]))) << what << "[" << k << "]";
  }
}

void expect_same_parameters(const nn::Module& actual, const nn::Module& expected) {
  const auto a = actual.named_parameters();
  const auto e = expected.named_parameters();
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) expect_near(a[i].second.data(), e[i].second.data(), a[i].first);
}

// One process on the whole batch: what every DDP run must reproduce.
std::shared_ptr<nn::Sequential> train_alone(uint64_t seed, int world) {
  std::shared_ptr<nn::Sequential> model = mlp(seed);
  optim::Sgd sgd = sgd_for(*model);
  for (int step = 0; step < kSteps; ++step) {
    sgd.zero_grad();
    backward_on(*model, global_batch(world * kSamplesPerRank, step));
    sgd.step();
  }
  return model;
}

TEST(DdpTest, ShardedTrainingEqualsOneProcessForEveryBucketSize) {
  Communicator& comm = mpitest::world();
  const int world = comm.world_size(), rank = comm.rank();
  const std::shared_ptr<nn::Sequential> reference = train_alone(7, world);
  // Parameters in reverse order (bytes): bias 12, weight 192, bias 64,
  // weight 2048, bias 128, weight 768. A bucket closes once it reaches the
  // cap: 100 B gives [12+192] [64+2048] [128] [768]; 512 B gives
  // [12+192+64+2048] [128+768]; the default 25 MiB one bucket.
  const std::vector<std::pair<double, int>> caps_and_buckets = {
      {100.0 / (1 << 20), 4}, {512.0 / (1 << 20), 2}, {25, 1}};
  for (const auto& [cap, buckets] : caps_and_buckets) {
    SCOPED_TRACE(::testing::Message() << "bucket_cap_mb " << cap);
    // Rank-dependent initial weights: DDP must start every rank from rank 0's.
    std::shared_ptr<nn::Sequential> model = mlp(rank == 0 ? 7 : 1000 + rank);
    DdpOptions options;
    options.reducer.bucket_cap_mb = cap;
    options.reducer.first_bucket_cap_mb = cap;
    auto ddp = value_or_die(DistributedDataParallel::create(model, &comm, options));
    optim::Sgd sgd = sgd_for(*model);
    for (int step = 0; step < kSteps; ++step) {
      sgd.zero_grad();
      const Batch mine = global_batch(world * kSamplesPerRank, step).slice(rank * kSamplesPerRank, kSamplesPerRank);
      ASSERT_OK(ddp->begin_step());
      backward_on(*model, mine);
      sgd.step();
    }
    expect_same_parameters(*model, *reference);
    const GradientReducer& reducer = ddp->reducer();
    EXPECT_EQ(reducer.stats().steps, kSteps);
    EXPECT_EQ(reducer.stats().allreduce_calls, int64_t{kSteps} * reducer.num_buckets());
    EXPECT_EQ(reducer.num_buckets(), buckets);
  }
}

TEST(DdpTest, NoSyncAccumulatesAndTheNextBackwardAveragesTheSums) {
  Communicator& comm = mpitest::world();
  const int world = comm.world_size(), rank = comm.rank();
  const int64_t micro = kSamplesPerRank / 2;
  const Batch batch = global_batch(world * kSamplesPerRank, 0);

  // Reference: every micro-batch's gradient summed, divided by the world
  // size (what accumulation on each rank then averaging gives).
  std::shared_ptr<nn::Sequential> reference = mlp(11);
  for (int64_t start = 0; start < world * kSamplesPerRank; start += micro) {
    backward_on(*reference, batch.slice(start, micro));
  }
  std::shared_ptr<nn::Sequential> model = mlp(11);
  auto ddp = value_or_die(DistributedDataParallel::create(model, &comm));
  {
    auto guard = ddp->no_sync();
    ASSERT_OK(ddp->begin_step());
    backward_on(*model, batch.slice(rank * kSamplesPerRank, micro));
  }
  EXPECT_EQ(ddp->reducer().stats().allreduce_calls, 0);
  ASSERT_OK(ddp->begin_step());
  backward_on(*model, batch.slice(rank * kSamplesPerRank + micro, micro));
  EXPECT_EQ(ddp->reducer().stats().allreduce_calls, ddp->reducer().num_buckets());
  const auto got = model->named_parameters();
  const auto want = reference->named_parameters();
  for (size_t i = 0; i < got.size(); ++i) {
    expect_near(got[i].second.grad(), want[i].second.grad() / static_cast<double>(world), got[i].first);
  }
}

TEST(DdpTest, TrainingBackwardWithoutBeginStepThrowsInsteadOfNotAveraging) {
  Communicator& comm = mpitest::world();
  const int world = comm.world_size(), rank = comm.rank();
  const Batch batch = global_batch(world * kSamplesPerRank, 0);
  const Batch mine = batch.slice(rank * kSamplesPerRank, kSamplesPerRank);
  std::shared_ptr<nn::Sequential> model = mlp(13);
  auto ddp = value_or_die(DistributedDataParallel::create(model, &comm));
  // Every rank stops at its first gradient, before any allreduce: the ranks
  // stay in step for what follows.
  expect_throws(absl::StatusCode::kFailedPrecondition,
                {"DistributedDataParallel: backward without begin_step()", absl::StrCat("rank ", rank)},
                [&] { backward_on(*model, mine); });
  EXPECT_EQ(ddp->reducer().stats().allreduce_calls, 0);

  // begin_step(), forward and backward average as ever: the whole batch's gradients.
  std::shared_ptr<nn::Sequential> reference = mlp(13);
  backward_on(*reference, batch);
  model->zero_grad();
  ASSERT_OK(ddp->begin_step());
  backward_on(*model, mine);
  EXPECT_EQ(ddp->reducer().stats().steps, 1);
  const auto got = model->named_parameters();
  const auto want = reference->named_parameters();
  for (size_t i = 0; i < got.size(); ++i) expect_near(got[i].second.grad(), want[i].second.grad(), got[i].first);

  // An evaluation-mode backward is no training step: it stays local, as before.
  model->eval();
  backward_on(*model, mine);
  EXPECT_EQ(ddp->reducer().stats().steps, 1);
}

// A conv net with two batch norms, whose running statistics are buffers:
// f32, f32, i64, f32, f32, i64 in state order.
std::shared_ptr<nn::Sequential> conv_bn_net() {
  manual_seed(3);
  nn::functional::Conv2dOptions same;
  same.padding = {1, 1};
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Conv2d>(2, 4, std::array<int64_t, 2>{3, 3}, same),
                                          std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Conv2d>(4, 4, std::array<int64_t, 2>{3, 3}, same),
                                          std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}),
                                          std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(4, 3));
}

// Each rank's buffers after two training steps on rank-specific data and
// then an evaluation forward, gathered on every rank: per buffer,
// world_size x numel values. The buffers travel packed by dtype in
// broadcasts of at most `bucket_bytes`.
std::vector<std::vector<double>> buffers_after_training(bool broadcast_buffers, int64_t bucket_bytes) {
  Communicator& comm = mpitest::world();
  std::shared_ptr<nn::Sequential> model = conv_bn_net();
  DdpOptions options;
  options.broadcast_buffers = broadcast_buffers;
  options.broadcast_bucket_bytes = bucket_bytes;
  auto ddp = value_or_die(DistributedDataParallel::create(model, &comm, options));
  Generator g(mpitest::job_seed() + 100 + comm.rank());
  for (int step = 0; step < 2; ++step) {
    // Rank r's data is shifted by r: its batch statistics differ.
    const Tensor x = randn({2, 2, 5, 5}, {}, &g) + comm.rank();
    EXPECT_OK(ddp->begin_step());
    backward_on(*model, {x, zeros({2}, {DType::kI64})});
  }
  model->eval();
  {
    // An evaluation forward takes rank 0's buffers too (and arms nothing).
    autograd::NoGradGuard no_grad;
    EXPECT_OK(ddp->begin_step());
    model->forward(Variable(zeros({1, 2, 5, 5})));
  }
  std::vector<std::vector<double>> gathered;
  for (const auto& [name, buffer] : model->named_buffers()) {
    const Tensor mine = to(buffer, DType::kF64);
    const Tensor all = empty({comm.world_size() * mine.numel()}, {DType::kF64});
    EXPECT_OK(comm.allgather(all, mine).wait());
    gathered.push_back(to_vector<double>(all));
  }
  return gathered;
}

// Rank 0's buffers on every rank with broadcast_buffers, each rank's own
// without (running means of its own shifted data).
void expect_rank_zeros_buffers(int64_t bucket_bytes) {
  const int world = mpitest::world().world_size();
  const std::vector<std::vector<double>> on = buffers_after_training(/*broadcast_buffers=*/true, bucket_bytes);
  const std::vector<std::vector<double>> off = buffers_after_training(/*broadcast_buffers=*/false, bucket_bytes);
  ASSERT_EQ(on.size(), 6u);  // running_mean, running_var, num_batches_tracked, twice
  for (size_t b = 0; b < on.size(); ++b) {
    SCOPED_TRACE(::testing::Message() << "buffer " << b);
    const size_t n = on[b].size() / world;
    // The evaluation forward broadcast rank 0's buffers to everyone.
    for (int r = 1; r < world; ++r) {
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(on[b][r * n + i], on[b][i]) << "rank " << r << " element " << i;
    }
    // Rank 0's own buffers are the same either way.
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(on[b][i], off[b][i]);
  }
  // Without it each rank keeps running means of its own (shifted) data.
  for (int r = 1; r < world; ++r) {
    double largest_difference = 0;
    for (int c = 0; c < 4; ++c) {
      largest_difference = std::max(largest_difference, std::abs(off[0][r * 4 + c] - off[0][c]));
    }
    EXPECT_GT(largest_difference, 1e-3) << "rank " << r;
  }
}

// Whether every rank holds rank 0's first running mean.
bool running_means_agree(nn::Module& model) {
  Communicator& comm = mpitest::world();
  const Tensor mine = to(model.named_buffers().front().second, DType::kF64);
  const Tensor all = empty({comm.world_size() * mine.numel()}, {DType::kF64});
  EXPECT_OK(comm.allgather(all, mine).wait());
  const std::vector<double> v = to_vector<double>(all);
  const int64_t n = mine.numel();
  for (int r = 1; r < comm.world_size(); ++r) {
    if (!std::equal(v.begin() + r * n, v.begin() + (r + 1) * n, v.begin())) return false;
  }
  return true;
}

// begin_step() takes rank 0's buffers only at the first forward since a
// synchronized one, as PyTorch's require_forward_param_sync has it: the
// micro-steps of an accumulation after its first, and the synchronized
// micro-step that ends it, run on the buffers they have; the first
// evaluation forward after training takes them again.
TEST(DdpTest, BuffersAreTakenAtTheFirstForwardAfterASynchronizedOne) {
  Communicator& comm = mpitest::world();
  std::shared_ptr<nn::Sequential> model = conv_bn_net();
  auto ddp = value_or_die(DistributedDataParallel::create(model, &comm));
  Generator g(mpitest::job_seed() + 200 + comm.rank());
  // Rank r's data is shifted by r: its batch statistics differ.
  const auto train_on_own_batch = [&] {
    backward_on(*model, {randn({2, 2, 5, 5}, {}, &g) + comm.rank(), zeros({2}, {DType::kI64})});
  };
  ASSERT_OK(ddp->begin_step());
  train_on_own_batch();  // synchronized
  ASSERT_FALSE(running_means_agree(*model));
  {
    auto local_only = ddp->no_sync();
    ASSERT_OK(ddp->begin_step());
    EXPECT_TRUE(running_means_agree(*model)) << "the first micro-step takes rank 0's";
    train_on_own_batch();
    ASSERT_OK(ddp->begin_step());
    EXPECT_FALSE(running_means_agree(*model)) << "a later micro-step keeps its own";
    train_on_own_batch();
  }
  ASSERT_OK(ddp->begin_step());
  EXPECT_FALSE(running_means_agree(*model)) << "so does the synchronized micro-step that ends the accumulation";
  train_on_own_batch();
  EXPECT_EQ(ddp->reducer().stats().steps, 2);
  model->eval();
  autograd::NoGradGuard no_grad;
  ASSERT_OK(ddp->begin_step());
  EXPECT_TRUE(running_means_agree(*model)) << "the evaluation takes rank 0's";
}

// Ranks whose models train different parameters would bucket different
// lists: with as many elements frozen on each, their allreduces would sum
// one parameter's gradient with another's. Every rank refuses at creation.
TEST(DdpTest, RanksTrainingDifferentParametersAreRefused) {
  Communicator& comm = mpitest::world();
  std::shared_ptr<nn::Sequential> model = mlp(17);
  // Rank 0 freezes the first Linear's bias, the others the second Linear's
  // weight: one frozen parameter each, so the parameter counts agree.
  auto params = model->named_parameters();
  const std::string frozen = comm.rank() == 0 ? "0.bias" : "2.weight";
  int frozen_count = 0;
  for (auto& [name, p] : params) {
    if (name != frozen) continue;
    p.set_requires_grad(false);
    ++frozen_count;
  }
  ASSERT_EQ(frozen_count, 1) << frozen;
  const absl::StatusOr<std::unique_ptr<DistributedDataParallel>> ddp = DistributedDataParallel::create(model, &comm);
  if (comm.world_size() == 1) {
    EXPECT_OK(ddp.status());
    return;
  }
  ::ts::testing::expect_error(ddp.status(), absl::StatusCode::kFailedPrecondition,
                              {"rank 1 holds a different model than rank 0", "trainable"});
}

// Rank 0 finishes w0's gradient first, the other ranks w2's. The buckets
// are planned again by rank 0's order on every rank, so the ranks' allreduces
// still match, and the averages stay right.
TEST(DdpTest, BucketsArePlannedAgainInRankZerosOrderOfGradients) {
  Communicator& comm = mpitest::world();
  const int world = comm.world_size(), rank = comm.rank();
  std::vector<GradientReducer::NamedParameter> params;
  for (int i = 0; i < 3; ++i) {
    params.emplace_back(absl::StrCat("w", i), Variable(full({64}, 1.0 + i), /*requires_grad=*/true));
  }
  const double tiny_cap_mb = 1.0 / (1 << 20);  // one parameter per bucket
  auto reducer = value_or_die(GradientReducer::create(params, &comm, {tiny_cap_mb, tiny_cap_mb, std::nullopt}));
  const std::vector<int> use_order = rank == 0 ? std::vector<int>{2, 1, 0} : std::vector<int>{0, 1, 2};
  using Names = std::vector<std::vector<std::string>>;
  for (int step = 0; step < 2; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    for (auto& [name, p] : params) p.clear_grad();
    ASSERT_OK(reducer->prepare_for_backward());
    Variable y(full({64}, 1.0 + rank));  // the gradients differ by rank
    for (int i : use_order) y = y * params[i].second;
    autograd::sum(y).backward();
    const Names want = step == 0 ? Names{{"w2"}, {"w1"}, {"w0"}} : Names{{"w0"}, {"w1"}, {"w2"}};
    EXPECT_EQ(reducer->bucket_parameter_names(), want);
    // d/dw_i = (1 + rank) * prod_{j != i} w_j, averaged: mean(1 + rank) = (world + 1) / 2.
    const double mean_x = (world + 1) / 2.0;
    EXPECT_FLOAT_EQ(to_vector<float>(params[0].second.grad())[0], mean_x * 6);
    EXPECT_FLOAT_EQ(to_vector<float>(params[1].second.grad())[0], mean_x * 3);
    EXPECT_FLOAT_EQ(to_vector<float>(params[2].second.grad())[0], mean_x * 2);
  }
}

// With the default bucket all four f32 statistics travel in one broadcast
// (an i64 count between them); with 16 bytes each tensor is a bucket of
// its own but the counts, which share one.
TEST(DdpTest, BroadcastBuffersGivesEveryRankRankZerosRunningStatistics) {
  for (const int64_t bucket_bytes : {DdpOptions().broadcast_bucket_bytes, int64_t{16}}) {
    SCOPED_TRACE(::testing::Message() << "bucket of " << bucket_bytes << " bytes");
    expect_rank_zeros_buffers(bucket_bytes);
  }
  DdpOptions none;
  none.broadcast_bucket_bytes = 0;
  EXPECT_FALSE(DistributedDataParallel::create(conv_bn_net(), &mpitest::world(), none).ok());
}

}  // namespace
}  // namespace ts::collectives::ddp
