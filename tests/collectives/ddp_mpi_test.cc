// DistributedDataParallel across ranks (2 and 4 under mpirun): training
// with each rank on its share of a batch ends with the parameters of one
// process training on the whole batch, for several bucket sizes (same
// result, allreduce counts as the bucket plan says), with no_sync
// accumulation, and with broadcast_buffers on and off.
#include <memory>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/variable.h"
#include "collectives/ddp/distributed_data_parallel.h"
#include "gtest/gtest.h"
#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/losses.h"
#include "nn/pooling.h"
#include "nn/relu.h"
#include "nn/sequential.h"
#include "optim/sgd.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tensor/testing.h"

namespace ts::collectives::ddp {
namespace {

using autograd::Variable;
using ::ts::testing::value_or_die;

constexpr int64_t kSamplesPerRank = 4;
constexpr int kSteps = 3;

// An MLP: the per-sample loss is independent of the other samples, so
// averaging the ranks' gradients equals the whole batch's gradient.
std::shared_ptr<nn::Module> mlp(uint64_t seed) {
  manual_seed(seed);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      value_or_die(nn::Linear::create(6, 32)), std::make_shared<nn::ReLU>(),
      value_or_die(nn::Linear::create(32, 16)), std::make_shared<nn::ReLU>(),
      value_or_die(nn::Linear::create(16, 3))});
}

// The job's whole batch, identical on every rank.
struct Batch {
  Tensor x, y;
  Batch slice(int64_t start, int64_t count) const {
    return {value_or_die(x.narrow(0, start, count)), value_or_die(y.narrow(0, start, count))};
  }
};

Batch global_batch(int64_t size, int step) {
  Generator g(mpitest::job_seed() + step);
  return {value_or_die(randn({size, 6}, {}, &g)),
          value_or_die(to(value_or_die(mul(value_or_die(rand({size}, {}, &g)), 2.999)), DType::kI64))};
}

absl::Status backward_on(const std::function<absl::StatusOr<Variable>(const Variable&)>& forward,
                         const Batch& b) {
  ASSIGN_OR_RETURN(Variable logits, forward(Variable(b.x)));
  ASSIGN_OR_RETURN(Variable loss, nn::cross_entropy(logits, b.y));
  return loss.backward();
}

optim::Sgd sgd_for(const nn::Module& model) {
  optim::SgdOptions options;
  options.lr = 0.1;
  options.momentum = 0.9;
  return value_or_die(optim::Sgd::create(model.named_parameters(), options));
}

void expect_same_parameters(const nn::Module& actual, const nn::Module& expected) {
  const auto a = actual.named_parameters();
  const auto e = expected.named_parameters();
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<float> av = value_or_die(to_vector<float>(a[i].second.data()));
    const std::vector<float> ev = value_or_die(to_vector<float>(e[i].second.data()));
    for (size_t k = 0; k < av.size(); ++k) {
      ASSERT_NEAR(av[k], ev[k], 1e-5 * (1 + std::abs(ev[k]))) << a[i].first << "[" << k << "]";
    }
  }
}

// One process on the whole batch: what every DDP run must reproduce.
std::shared_ptr<nn::Module> train_alone(uint64_t seed, int world) {
  std::shared_ptr<nn::Module> model = mlp(seed);
  optim::Sgd sgd = sgd_for(*model);
  for (int step = 0; step < kSteps; ++step) {
    sgd.zero_grad();
    EXPECT_OK(backward_on([&](const Variable& x) { return model->forward(x); },
                          global_batch(world * kSamplesPerRank, step)));
    EXPECT_OK(sgd.step());
  }
  return model;
}

TEST(DdpTest, ShardedTrainingEqualsOneProcessForEveryBucketSize) {
  Communicator& comm = mpitest::world();
  const int world = comm.world_size(), rank = comm.rank();
  const std::shared_ptr<nn::Module> reference = train_alone(7, world);
  // Parameters in reverse order (bytes): bias 12, weight 192, bias 64,
  // weight 2048, bias 128, weight 768. A bucket closes once it reaches the
  // cap: 100 B gives [12+192] [64+2048] [128] [768]; 512 B gives
  // [12+192+64+2048] [128+768]; the default 25 MiB one bucket.
  const std::vector<std::pair<double, int>> caps_and_buckets = {
      {100.0 / (1 << 20), 4}, {512.0 / (1 << 20), 2}, {25, 1}};
  for (const auto& [cap, buckets] : caps_and_buckets) {
    SCOPED_TRACE(::testing::Message() << "bucket_cap_mb " << cap);
    // Rank-dependent initial weights: DDP must start every rank from rank 0's.
    std::shared_ptr<nn::Module> model = mlp(rank == 0 ? 7 : 1000 + rank);
    DdpOptions options;
    options.reducer.bucket_cap_mb = cap;
    options.reducer.first_bucket_cap_mb = cap;
    auto ddp = value_or_die(DistributedDataParallel::create(model, &comm, options));
    optim::Sgd sgd = sgd_for(*model);
    for (int step = 0; step < kSteps; ++step) {
      sgd.zero_grad();
      const Batch mine = global_batch(world * kSamplesPerRank, step).slice(rank * kSamplesPerRank,
                                                                           kSamplesPerRank);
      ASSERT_OK(backward_on([&](const Variable& x) { return ddp->forward(x); }, mine));
      ASSERT_OK(sgd.step());
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
  std::shared_ptr<nn::Module> reference = mlp(11);
  for (int64_t start = 0; start < world * kSamplesPerRank; start += micro) {
    ASSERT_OK(backward_on([&](const Variable& x) { return reference->forward(x); },
                          batch.slice(start, micro)));
  }
  std::shared_ptr<nn::Module> model = mlp(11);
  auto ddp = value_or_die(DistributedDataParallel::create(model, &comm));
  {
    auto guard = ddp->no_sync();
    ASSERT_OK(backward_on([&](const Variable& x) { return ddp->forward(x); },
                          batch.slice(rank * kSamplesPerRank, micro)));
  }
  EXPECT_EQ(ddp->reducer().stats().allreduce_calls, 0);
  ASSERT_OK(backward_on([&](const Variable& x) { return ddp->forward(x); },
                        batch.slice(rank * kSamplesPerRank + micro, micro)));
  EXPECT_EQ(ddp->reducer().stats().allreduce_calls, ddp->reducer().num_buckets());
  const auto got = model->named_parameters();
  const auto want = reference->named_parameters();
  for (size_t i = 0; i < got.size(); ++i) {
    const Tensor expected = value_or_die(div(want[i].second.grad(), static_cast<double>(world)));
    const std::vector<float> g = value_or_die(to_vector<float>(got[i].second.grad()));
    const std::vector<float> e = value_or_die(to_vector<float>(expected));
    for (size_t k = 0; k < g.size(); ++k) {
      ASSERT_NEAR(g[k], e[k], 1e-5 * (1 + std::abs(e[k]))) << got[i].first << "[" << k << "]";
    }
  }
}

// A conv net with batch norm, whose running statistics are buffers.
std::shared_ptr<nn::Module> conv_bn_net() {
  manual_seed(3);
  nn::functional::Conv2dOptions same;
  same.padding = {1, 1};
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      value_or_die(nn::Conv2d::create(2, 4, {3, 3}, same)), value_or_die(nn::BatchNorm2d::create(4)),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::AdaptiveAvgPool2d>(std::array<int64_t, 2>{1, 1}),
      std::make_shared<nn::Flatten>(), value_or_die(nn::Linear::create(4, 3))});
}

// Each rank's running mean after two training steps on rank-specific data
// and then an evaluation forward, gathered on every rank.
std::vector<float> running_means_after_training(bool broadcast_buffers) {
  Communicator& comm = mpitest::world();
  std::shared_ptr<nn::Module> model = conv_bn_net();
  DdpOptions options;
  options.broadcast_buffers = broadcast_buffers;
  auto ddp = value_or_die(DistributedDataParallel::create(model, &comm, options));
  Generator g(mpitest::job_seed() + 100 + comm.rank());
  for (int step = 0; step < 2; ++step) {
    // Rank r's data is shifted by r: its batch statistics differ.
    const Tensor x = value_or_die(add(value_or_die(randn({2, 2, 5, 5}, {}, &g)), comm.rank()));
    const Tensor y = value_or_die(zeros({2}, {DType::kI64}));
    EXPECT_OK(backward_on([&](const Variable& v) { return ddp->forward(v); }, {x, y}));
  }
  model->eval();
  {
    autograd::NoGradGuard no_grad;
    EXPECT_OK(ddp->forward(Variable(value_or_die(zeros({1, 2, 5, 5})))).status());
  }
  const Tensor mean = model->named_buffers()[0].second;  // "1.running_mean"
  Tensor all = value_or_die(empty({comm.world_size() * mean.numel()}));
  EXPECT_OK(comm.allgather(all, mean).wait());
  return value_or_die(to_vector<float>(all));
}

TEST(DdpTest, BroadcastBuffersGivesEveryRankRankZerosRunningStatistics) {
  const int world = mpitest::world().world_size();
  const std::vector<float> on = running_means_after_training(/*broadcast_buffers=*/true);
  // The evaluation forward broadcast rank 0's statistics to everyone.
  for (int r = 1; r < world; ++r) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(on[r * 4 + c], on[c]) << "rank " << r << " channel " << c;
  }
  const std::vector<float> off = running_means_after_training(/*broadcast_buffers=*/false);
  // Without it each rank keeps statistics of its own (shifted) data.
  for (int r = 1; r < world; ++r) {
    float largest_difference = 0;
    for (int c = 0; c < 4; ++c) {
      largest_difference = std::max(largest_difference, std::abs(off[r * 4 + c] - off[c]));
    }
    EXPECT_GT(largest_difference, 1e-3) << "rank " << r;
  }
  // Rank 0's own statistics are the same either way.
  for (int c = 0; c < 4; ++c) EXPECT_FLOAT_EQ(on[c], off[c]);
}

}  // namespace
}  // namespace ts::collectives::ddp
