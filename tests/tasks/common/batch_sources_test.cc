// The trainer's batch sources over a recipe's datasets: on several ranks
// training shards are shuffled and of one length, evaluation shards read
// every sample exactly once in all; a recipe that gives neither both
// datasets nor both sources, or an evaluation set smaller than the world,
// is an error. (The ranks' samplers need no communicator, so one process
// plays each rank in turn.)
#include "tasks/common/batch_sources.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

// Example i is {i} (i64).
class Indices final : public data::Dataset {
 public:
  explicit Indices(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  absl::StatusOr<data::Example> get(int64_t i) const override {
    data::Example e;
    e.fields.push_back(from_vector<int64_t>({i}, {1}));
    return e;
  }

 private:
  int64_t n_;
};

TaskConfig config_with_batch(int batch) {
  TaskConfig c;
  c.set_batch_size(batch);
  c.set_num_workers(0);
  c.set_seed(3);
  return c;
}

// The sample indices of one epoch of `source`, in order.
std::vector<int64_t> epoch_of(data::BatchSource& source) {
  EXPECT_TRUE(source.start_epoch(0).ok());
  std::vector<int64_t> seen;
  while (true) {
    std::optional<data::Batch> batch = value_or_die(source.next());
    if (!batch) break;
    for (int64_t i : to_vector<int64_t>(batch->fields[0])) seen.push_back(i);
  }
  return seen;
}

TrainingData sets(int64_t train, int64_t eval) {
  TrainingData data;
  data.train = std::make_shared<Indices>(train);
  data.eval = std::make_shared<Indices>(eval);
  return data;
}

TEST(BatchSourcesTest, RanksTrainOnShardsOfOneLengthAndEvaluateEverySampleOnce) {
  const TrainingData data = sets(/*train=*/10, /*eval=*/7);
  std::vector<int64_t> trained, evaluated;
  for (int rank = 0; rank < 3; ++rank) {
    BatchSources sources = value_or_die(make_batch_sources(data, config_with_batch(2), 3, rank, Device::cpu()));
    const std::vector<int64_t> train = epoch_of(*sources.train);
    EXPECT_EQ(train.size(), 4u) << "rank " << rank << ": 10 samples padded to 12, 4 per rank";
    trained.insert(trained.end(), train.begin(), train.end());
    const std::vector<int64_t> eval = epoch_of(*sources.eval);
    evaluated.insert(evaluated.end(), eval.begin(), eval.end());
  }
  std::sort(trained.begin(), trained.end());
  EXPECT_EQ(std::unique(trained.begin(), trained.end()) - trained.begin(), 10) << "every training sample is seen";
  std::sort(evaluated.begin(), evaluated.end());
  EXPECT_EQ(evaluated, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(BatchSourcesTest, OneProcessShufflesTrainingAndReadsEvaluationInOrder) {
  BatchSources sources = value_or_die(make_batch_sources(sets(16, 5), config_with_batch(4), 1, 0, Device::cpu()));
  const std::vector<int64_t> train = epoch_of(*sources.train);
  std::vector<int64_t> sorted = train;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(train, sorted) << "shuffled";
  EXPECT_EQ(sorted.size(), 16u);
  EXPECT_EQ(epoch_of(*sources.eval), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(BatchSourcesTest, TheRecipesOwnSourcesAreUsedAsTheyAre) {
  const TrainingData loaders = sets(8, 8);
  BatchSources made = value_or_die(make_batch_sources(loaders, config_with_batch(2), 1, 0, Device::cpu()));
  TrainingData own;
  own.train_batches = made.train;
  own.eval_batches = made.eval;
  const BatchSources taken = value_or_die(make_batch_sources(own, config_with_batch(2), 1, 0, Device::cpu()));
  EXPECT_EQ(taken.train, made.train);
  EXPECT_EQ(taken.eval, made.eval);
}

TEST(BatchSourcesTest, BadRecipesAndTooSmallEvaluationSetsAreErrors) {
  TrainingData half = sets(8, 8);
  half.eval = nullptr;
  expect_error(make_batch_sources(half, config_with_batch(2), 1, 0, Device::cpu()).status(),
               absl::StatusCode::kInvalidArgument, {"either both datasets", "or both batch sources"});
  expect_error(make_batch_sources(sets(8, 2), config_with_batch(1), 3, 0, Device::cpu()).status(),
               absl::StatusCode::kInvalidArgument, {"evaluation set's 2 samples", "each of 3 ranks one"});
}

}  // namespace
}  // namespace ts::tasks
