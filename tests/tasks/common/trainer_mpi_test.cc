// The Trainer across ranks (2 and 3 under mpirun): ranks whose models start from
// different weights train from rank 0's, as DDP's broadcast gives them, and
// end every step with the same parameters, bit for bit. Under mixed precision
// this needs the f32 masters to be taken after that broadcast: masters taken
// from a rank's own first weights would round it back onto its own path
// after the first step. Evaluation runs rank 0's model, running statistics
// included, and an evaluation set that does not divide among the ranks
// counts each sample once. A resumed run ends bit for bit as the
// uninterrupted one, and ranks that restore different runs stop.
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "collectives/communicator.h"
#include "data/dataset.h"
#include "gtest/gtest.h"
#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/relu.h"
#include "nn/sequential.h"
#include "tasks/common/classification.h"
#include "tasks/common/config_diff.h"
#include "tasks/common/trainer.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/collectives/mpi_testing.h"
#include "tests/tasks/common/test_task.pb.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

constexpr int64_t kClasses = 4;

// `n` one-channel 8x8 images of random classes, the same on every rank.
class RandomImages final : public data::Dataset {
 public:
  explicit RandomImages(int64_t n = 64) {
    Generator g(collectives::mpitest::job_seed());
    images_ = randn({n, 1, 8, 8}, {}, &g);
    labels_ = to(rand({n}, {}, &g) * (kClasses - 0.001), DType::kI64);
  }
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }
  int64_t size() const override { return images_.size(0); }
  absl::StatusOr<data::Example> get(int64_t index) const override {
    return data::Example{{clone(images_.select(0, index)), clone(labels_.select(0, index))}};
  }

 private:
  Tensor images_, labels_;
};

std::shared_ptr<nn::Sequential> small_cnn() {
  const nn::functional::ConvOptions<2> same{.padding = {1, 1}};
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Conv2d>(1, 4, std::array<int64_t, 2>{3, 3}, same, false),
                                          std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Flatten>(),
                                          std::make_shared<nn::Linear>(4 * 8 * 8, kClasses));
}

// Every value of every parameter, in f64.
std::vector<double> values(nn::Module& model) {
  std::vector<double> all;
  for (const autograd::Variable& p : model.parameters()) {
    const std::vector<double> v = to_vector<double>(to(contiguous(p.data()), DType::kF64));
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

// One epoch of batch 8 at lr 0.1 on the CPU, its output under the test's
// temporary directory/<name>.
TaskConfig one_epoch(const std::string& name) {
  TaskConfig config;
  config.set_name(name);
  config.set_seed(7);
  config.set_epochs(1);
  config.set_batch_size(8);
  config.set_num_workers(0);
  config.mutable_sgd()->set_lr(0.1);
  config.set_device("cpu");
  config.set_target_metric("accuracy");
  config.set_target_value(0.99);
  config.set_output_dir(join_path(join_path(::testing::TempDir(), name), "out"));
  return config;
}

absl::StatusOr<RunSummary> try_on_every_rank(const TaskConfig& config, Recipe& recipe) {
  collectives::Communicator& world = collectives::mpitest::world();
  TrainerOptions options;
  options.world_size = world.world_size();
  options.rank = world.rank();
  options.comm = &world;
  options.progress_out = nullptr;
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::create(config, Device::cpu(), recipe, options));
  return trainer->run();
}

RunSummary run_on_every_rank(const TaskConfig& config, Recipe& recipe) {
  return value_or_die(try_on_every_rank(config, recipe));
}

class TrainerAcrossRanks : public ::testing::TestWithParam<TaskConfig::DType> {};

TEST_P(TrainerAcrossRanks, RanksStartingApartTrainFromRankZerosWeights) {
  collectives::Communicator& world = collectives::mpitest::world();
  const int rank = world.rank();
  TaskConfig config = one_epoch(TaskConfig::DType_Name(GetParam()));
  config.set_max_steps(3);
  config.mutable_sgd()->set_momentum(0.9);
  config.set_dtype(GetParam());
  config.set_checkpoint_dir(join_path(join_path(::testing::TempDir(), TaskConfig::DType_Name(GetParam())), "ckpt"));
  const auto images = std::make_shared<RandomImages>();
  TrainingData data{images, images, nullptr, nullptr, "random images"};
  manual_seed(100 + rank);  // each rank's own first weights
  const auto model = small_cnn();
  const std::vector<double> first = values(*model);
  const std::vector<double> ranks_first = value_or_die(collectives::allgather_values(world, Device::cpu(), first));
  ASSERT_NE(std::vector<double>(ranks_first.begin(), ranks_first.begin() + first.size()),
            std::vector<double>(ranks_first.begin() + first.size(), ranks_first.begin() + 2 * first.size()))
      << "the ranks should start apart";

  ClassificationRecipe recipe(std::move(data), nn::Handle(model), cross_entropy_objective());
  EXPECT_EQ(run_on_every_rank(config, recipe).global_step, 3);

  const std::vector<double> trained = values(*model);
  const std::vector<double> all = value_or_die(collectives::allgather_values(world, Device::cpu(), trained));
  const std::vector<double> rank0(all.begin(), all.begin() + trained.size());
  EXPECT_NE(rank0, std::vector<double>(ranks_first.begin(), ranks_first.begin() + first.size())) << "it trained";
  for (int r = 1; r < world.world_size(); ++r) {
    const std::vector<double> theirs(all.begin() + r * trained.size(), all.begin() + (r + 1) * trained.size());
    EXPECT_EQ(theirs, rank0) << "rank " << r << "'s parameters after training";
  }
}

// Evaluation runs rank 0's model on every rank, batch norm's running
// statistics included (as PyTorch's DDP takes them at the first evaluation
// forward): each rank's had moved by its own shard's last batch. And an
// evaluation set that does not divide among the ranks counts each sample
// once, so the metrics are those of the whole set on one process (padded
// shards would count a sample twice).
TEST(TrainerAcrossRanksTest, EvaluationRunsRankZerosModelAndCountsEachSampleOnce) {
  collectives::Communicator& world = collectives::mpitest::world();
  const TaskConfig config = one_epoch("uneven_eval");
  const int64_t n = 64 * world.world_size() + 1;
  ASSERT_NE(n % world.world_size(), 0);
  const auto images = std::make_shared<RandomImages>(n);
  TrainingData data{images, images, nullptr, nullptr, "random images"};
  manual_seed(7);
  const auto model = small_cnn();
  ClassificationRecipe recipe(std::move(data), nn::Handle(model), cross_entropy_objective());
  const RunSummary done = run_on_every_rank(config, recipe);

  for (const auto& [name, buffer] : model->named_buffers()) {
    const std::vector<double> mine = to_vector<double>(to(buffer, DType::kF64));
    const std::vector<double> all = value_or_die(collectives::allgather_values(world, Device::cpu(), mine));
    for (int r = 1; r < world.world_size(); ++r) {
      EXPECT_EQ(std::vector<double>(all.begin() + r * mine.size(), all.begin() + (r + 1) * mine.size()),
                std::vector<double>(all.begin(), all.begin() + mine.size()))
          << "rank " << r << "'s " << name << " at the evaluation";
    }
  }
  autograd::NoGradGuard no_grad;
  model->eval();
  const Tensor predicted = argmax(model->forward(autograd::Variable(images->images())).data(), 1);
  const double correct = item<double>(sum(to(eq(predicted, images->labels()), DType::kF64)));
  EXPECT_EQ(done.last_metrics.at("accuracy"), correct / static_cast<double>(n));
}

// small_cnn() from seed 7 on RandomImages.
ClassificationRecipe recipe(ClassificationObjective objective = cross_entropy_objective()) {
  const auto images = std::make_shared<RandomImages>();
  manual_seed(7);
  return ClassificationRecipe(TrainingData{images, images, nullptr, nullptr, "random images"}, nn::Handle(small_cnn()),
                              std::move(objective));
}

// An MLP whose head is registered before its hidden layer: backward
// finishes the head's gradients first, the reverse of the registration
// order the reducer's first plan guesses, so its planning again after the
// first step moves every gradient of the hidden layer by 2404 places in the
// bucket.
class HeadFirstMlp final : public nn::Module {
 public:
  HeadFirstMlp() : Module("HeadFirstMlp") {
    head_ = register_module("head", std::make_shared<nn::Linear>(600, kClasses));
    hidden_ = register_module("hidden", std::make_shared<nn::Linear>(64, 600));
  }
  autograd::Variable forward(const autograd::Variable& x) {
    return head_(autograd::relu(hidden_(autograd::reshape(x, {x.size(0), 64}))));
  }

 private:
  nn::Handle<nn::Linear> head_, hidden_;
};

// HeadFirstMlp from seed 7 on RandomImages, and the model.
std::pair<ClassificationRecipe, std::shared_ptr<HeadFirstMlp>> head_first_recipe() {
  const auto images = std::make_shared<RandomImages>();
  manual_seed(7);
  const auto model = std::make_shared<HeadFirstMlp>();
  return {ClassificationRecipe(TrainingData{images, images, nullptr, nullptr, "random images"}, nn::Handle(model),
                               cross_entropy_objective()),
          model};
}

// A resumed run ends with the parameters the uninterrupted run ends with,
// bit for bit. On three or more ranks that needs the resumed run's gradient
// buckets planned from its first step as the first run had planned them
// after its own first step: where an element sits in its bucket decides in
// which order a ring adds the ranks' values (a resume whose first step went
// by reverse registration order instead ended with 4146 of the 41404
// parameters apart on 3 ranks).
TEST(TrainerAcrossRanksTest, AResumedRunEndsAsTheUninterruptedOneBitForBit) {
  TaskConfig config = one_epoch("uninterrupted");
  config.set_epochs(3);
  config.set_max_steps(6);
  config.mutable_sgd()->set_momentum(0.9);
  auto [whole, uninterrupted] = head_first_recipe();
  ASSERT_EQ(run_on_every_rank(config, whole).global_step, 6);

  config.set_name("interrupted");
  config.set_output_dir(join_path(join_path(::testing::TempDir(), "interrupted"), "out"));
  config.set_checkpoint_dir(join_path(join_path(::testing::TempDir(), "interrupted"), "ckpt"));
  // One step: the checkpoint is written before the second step plans the
  // buckets by the first one's order.
  config.set_max_steps(1);
  auto [first, first_model] = head_first_recipe();
  ASSERT_EQ(run_on_every_rank(config, first).global_step, 1);
  config.set_max_steps(6);
  config.set_resume(true);
  auto [rest, resumed] = head_first_recipe();
  ASSERT_EQ(run_on_every_rank(config, rest).global_step, 6);
  EXPECT_EQ(values(*resumed), values(*uninterrupted));
}

// A failure of one rank's own stops every rank at once, each naming it: the
// others would otherwise run on into a collective that rank never joins
// (and wait out its timeout), or finish as if nothing had happened.
class TrainerFailureAcrossRanks : public ::testing::Test {
 protected:
  // Cross-entropy that runs `before_step(k)` ahead of the k-th step's loss
  // (1-based) and adds what it returns to the loss (its gradient unchanged).
  static ClassificationObjective with_hook(std::function<double(int)> before_step) {
    ClassificationObjective objective = cross_entropy_objective();
    objective.loss = [calls = 0, before_step, ce = objective.loss](const autograd::Variable& logits,
                                                                   const Tensor& labels) mutable {
      return ce(logits, labels) + before_step(++calls);
    };
    return objective;
  }
  static int rank() { return collectives::mpitest::world().rank(); }
  static std::string dir(const std::string& name) { return join_path(::testing::TempDir(), name); }
};

// Rank 1's loss is NaN at its second step, its gradients finite: only rank 1
// sees it, and rank 0's losses stay finite.
TEST_F(TrainerFailureAcrossRanks, ALossThatIsNanOnOneRankStopsEveryRank) {
  TaskConfig config = one_epoch("nan_on_rank_1");
  config.set_max_steps(3);
  ClassificationRecipe nan_recipe =
      recipe(with_hook([](int step) { return step == 2 && rank() == 1 ? std::nan("") : 0.0; }));
  const absl::Status status = try_on_every_rank(config, nan_recipe).status();
  if (rank() == 1) {
    expect_error(status, absl::StatusCode::kInternal, {"step 2: the training loss is nan"});
  } else {
    expect_error(status, absl::StatusCode::kAborted, {"rank 1 failed taking in its training losses"});
  }
}

// Only rank 0 writes checkpoints; by the time it saves one (at max_steps) a
// file has taken its checkpoint_dir's place (which the start found
// writable).
TEST_F(TrainerFailureAcrossRanks, ACheckpointRankZeroCannotWriteStopsEveryRank) {
  TaskConfig config = one_epoch("unwritable_checkpoint");
  config.set_max_steps(3);
  const std::string file = dir("a_file");
  config.set_checkpoint_dir(file);
  ClassificationRecipe r = recipe(with_hook([&file](int step) {
    if (step == 2 && rank() == 0) {
      std::filesystem::remove_all(file);
      EXPECT_TRUE(write_file_atomically(file, "not a directory").ok());
    }
    return 0.0;
  }));
  const absl::Status status = try_on_every_rank(config, r).status();
  if (rank() == 0) {
    expect_error(status, absl::StatusCode::kFailedPrecondition, {"a_file"});
  } else {
    expect_error(status, absl::StatusCode::kAborted, {"rank 0 failed writing the checkpoint"});
  }
}

// Rank 1 resumes from a directory without the checkpoint rank 0 wrote.
TEST_F(TrainerFailureAcrossRanks, ACheckpointOneRankCannotReadStopsEveryRank) {
  TaskConfig config = one_epoch("resume_on_one_rank");
  config.set_max_steps(2);
  config.set_checkpoint_dir(dir("shared_checkpoint"));
  ClassificationRecipe first = recipe();
  ASSERT_EQ(run_on_every_rank(config, first).global_step, 2);
  config.set_max_steps(4);
  config.set_resume(true);
  if (rank() == 1) config.set_checkpoint_dir(dir("empty_checkpoint"));
  ClassificationRecipe again = recipe();
  const absl::Status status = try_on_every_rank(config, again).status();
  if (rank() == 1) {
    expect_error(status, absl::StatusCode::kNotFound, {"--resume: no checkpoint", "empty_checkpoint"});
  } else {
    expect_error(status, absl::StatusCode::kAborted, {"rank 1 failed restoring the checkpoint"});
  }
}

// Each rank reads the checkpoint by itself: rank 1 finds an older run's in
// its directory (a node-local one, say), of the same shape as rank 0's.
TEST_F(TrainerFailureAcrossRanks, RanksRestoringDifferentRunsStopEveryRank) {
  TaskConfig config = one_epoch("two_checkpoints");
  config.set_max_steps(2);
  config.set_checkpoint_dir(dir("older_checkpoint"));
  ClassificationRecipe older = recipe();
  ASSERT_EQ(run_on_every_rank(config, older).global_step, 2);
  config.set_max_steps(3);
  config.set_checkpoint_dir(dir("newer_checkpoint"));
  ClassificationRecipe newer = recipe();
  ASSERT_EQ(run_on_every_rank(config, newer).global_step, 3);
  config.set_max_steps(4);
  config.set_resume(true);
  if (rank() == 1) config.set_checkpoint_dir(dir("older_checkpoint"));
  ClassificationRecipe again = recipe();
  expect_error(
      try_on_every_rank(config, again).status(), absl::StatusCode::kFailedPrecondition,
      {"rank 1 restored another run than rank 0", "(step 2,", "against step 3,", "one directory every rank reads"});
}

// Each rank parses its own flags: one given another lr would drift apart
// on the same averaged gradients. task_main compares the ranks' configs
// before the recipe; every rank stops, the one that differs naming the
// field. Paths may differ by rank, and a field spelled out at its default
// is the same config.
TEST_F(TrainerFailureAcrossRanks, RanksGivenAnotherConfigAreRefusedOnEveryRank) {
  collectives::Communicator& world = collectives::mpitest::world();
  TaskConfig config = one_epoch("another_config");
  config.set_checkpoint_dir(dir(absl::StrCat("rank_", rank())));
  config.MutableExtension(testing::toy)->set_cache_dir(dir(absl::StrCat("cache_", rank())));
  if (rank() == 1) config.set_warmup_steps(TaskConfig().warmup_steps());
  EXPECT_OK(check_ranks_share_config(world, Device::cpu(), config));
  if (rank() == 1) config.mutable_sgd()->set_lr(0.2);
  const absl::Status status = check_ranks_share_config(world, Device::cpu(), config);
  if (rank() == 1) {
    expect_error(
        status, absl::StatusCode::kFailedPrecondition,
        {"rank 1 differs from rank 0 in its config (sgd.lr: 0.1 -> 0.2)", "every rank must be given the same"});
  } else {
    expect_error(status, absl::StatusCode::kFailedPrecondition, {"rank(s) 1 differ from rank 0 in their config"});
  }
}

// A recipe whose evaluation gives no sums on rank 1: that rank fails after
// its last evaluation batch, where the others go on to the sums' allreduce.
class NoSumsOnRankOne final : public Recipe {
 public:
  explicit NoSumsOnRankOne(ClassificationRecipe inner) : inner_(std::move(inner)) {}
  const TrainingData& data() const override { return inner_.data(); }
  std::shared_ptr<nn::Module> model() const override { return inner_.model(); }
  autograd::Variable loss(absl::Span<const Tensor> batch) override { return inner_.loss(batch); }
  EvalSums evaluate(absl::Span<const Tensor> batch) override {
    return collectives::mpitest::world().rank() == 1 ? EvalSums{} : inner_.evaluate(batch);
  }
  Metrics metrics(const std::map<std::string, double>& sums) const override { return inner_.metrics(sums); }

 private:
  ClassificationRecipe inner_;
};

TEST_F(TrainerFailureAcrossRanks, AnEvaluationFailingOnOneRankStopsEveryRank) {
  TaskConfig config = one_epoch("no_sums_on_rank_1");
  NoSumsOnRankOne no_sums(recipe());
  const absl::Status status = try_on_every_rank(config, no_sums).status();
  if (rank() == 1) {
    expect_error(status, absl::StatusCode::kInvalidArgument, {"evaluation (epoch 1)", "the recipe gave no sums"});
  } else {
    expect_error(status, absl::StatusCode::kAborted, {"rank 1 failed evaluating"});
  }
}

INSTANTIATE_TEST_SUITE_P(F32AndMixed, TrainerAcrossRanks,
                         ::testing::Values(TaskConfig::F32, TaskConfig::F16, TaskConfig::BF16),
                         [](const ::testing::TestParamInfo<TaskConfig::DType>& info) {
                           return TaskConfig::DType_Name(info.param);
                         });

}  // namespace
}  // namespace ts::tasks
