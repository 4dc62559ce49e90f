// The DataLoader: order with and without shuffling, determinism across
// worker counts, errors and exceptions (ts::Error from tensor ops included)
// from workers and from collate, shutdown mid-epoch, the bound on how far
// the workers run ahead, and workers that run their ops on one thread.
#include "data/loader/loader.h"

#include <atomic>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <thread>

#include "base/error.h"
#include "gtest/gtest.h"
#include "tensor/cpu/parallel.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

// get(i) = {f32 [2] = {i, -i}, i64 scalar i}, with hooks for the tests.
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  absl::StatusOr<Example> get(int64_t index) const override {
    int64_t seen = max_requested.load();
    while (index > seen && !max_requested.compare_exchange_weak(seen, index)) {
    }
    if (index > allowed.load()) {
      int64_t worst = beyond_allowed.load();
      while (index > worst && !beyond_allowed.compare_exchange_weak(worst, index)) {
      }
    }
    ++calls;
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (index == fail_at) return absl::DataLossError("record is corrupt");
    if (index == throw_at) throw std::runtime_error("reader exploded");
    const int64_t rows = index == odd_shape_at ? 3 : 2;
    std::vector<float> values(rows, static_cast<float>(index));
    values[1] = -static_cast<float>(index);
    Example e;
    e.fields.push_back(from_vector<float>(values, {rows}));
    e.fields.push_back(full({}, index, {DType::kI64}));
    return e;
  }

  int64_t fail_at = -1, throw_at = -1, odd_shape_at = -1;
  std::chrono::microseconds delay{0};
  mutable std::atomic<int64_t> max_requested{-1};
  // The largest index a request may name now (tests that bound the workers
  // raise it as they consume), and the largest request beyond it (-1: none).
  std::atomic<int64_t> allowed{std::numeric_limits<int64_t>::max()};
  mutable std::atomic<int64_t> beyond_allowed{-1};
  mutable std::atomic<int64_t> calls{0};

 private:
  int64_t n_;
};

std::unique_ptr<DataLoader> make_loader(std::shared_ptr<const Dataset> dataset, std::unique_ptr<Sampler> sampler,
                                        LoaderOptions options) {
  return value_or_die(DataLoader::create(std::move(dataset), std::move(sampler), std::move(options)));
}

// The label field of every batch of one epoch, in delivery order.
std::vector<std::vector<int64_t>> epoch_labels(DataLoader& loader, int64_t epoch) {
  EXPECT_TRUE(loader.start_epoch(epoch).ok());
  std::vector<std::vector<int64_t>> out;
  while (true) {
    absl::StatusOr<std::optional<Batch>> b = loader.next();
    EXPECT_TRUE(b.ok()) << b.status();
    if (!b.ok() || !b->has_value()) break;
    EXPECT_EQ((*b)->index, static_cast<int64_t>(out.size()));
    out.push_back(to_vector<int64_t>((*b)->fields[1]));
    EXPECT_EQ(out.back(), (*b)->sample_indices);
  }
  return out;
}

TEST(LoaderTest, DeliversBatchesInSamplerOrder) {
  auto dataset = std::make_shared<IndexDataset>(23);
  for (int workers : {0, 1, 3}) {
    auto loader = make_loader(dataset, std::make_unique<SequentialSampler>(23),
                              {.batch_size = 5, .num_workers = workers, .prefetch_depth = 2});
    ASSERT_OK(loader->start_epoch(0));
    EXPECT_EQ(loader->num_batches(), 5);
    int64_t expected = 0;
    while (true) {
      ASSERT_OK_AND_ASSIGN(std::optional<Batch> batch, loader->next());
      if (!batch.has_value()) break;
      const int64_t rows = batch->fields[0].size(0);
      EXPECT_EQ(batch->fields[0].shape(), (Shape{rows, 2}));
      EXPECT_EQ(batch->fields[1].shape(), (Shape{rows}));
      const std::vector<float> values = to_vector<float>(batch->fields[0]);
      for (int64_t r = 0; r < rows; ++r, ++expected) {
        EXPECT_EQ(values[2 * r], expected);
        EXPECT_EQ(values[2 * r + 1], -expected);
      }
    }
    EXPECT_EQ(expected, 23) << "workers=" << workers;
    ASSERT_OK_AND_ASSIGN(std::optional<Batch> after, loader->next());
    EXPECT_FALSE(after.has_value());  // stays exhausted
  }
}

TEST(LoaderTest, ShuffledOrderFollowsTheSamplerPerEpoch) {
  auto dataset = std::make_shared<IndexDataset>(40);
  auto loader = make_loader(dataset, std::make_unique<ShuffledSampler>(40, 9),
                            {.batch_size = 8, .num_workers = 3, .prefetch_depth = 3});
  for (int64_t epoch : {0, 1}) {
    const std::vector<int64_t> order = shuffled_range(40, 9, epoch);
    std::vector<int64_t> seen;
    for (const auto& labels : epoch_labels(*loader, epoch)) seen.insert(seen.end(), labels.begin(), labels.end());
    EXPECT_EQ(seen, order) << "epoch " << epoch;
  }
}

TEST(LoaderTest, DropLastDropsTheShortBatch) {
  auto dataset = std::make_shared<IndexDataset>(10);
  auto loader = make_loader(dataset, std::make_unique<SequentialSampler>(10), {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(epoch_labels(*loader, 0).size(), 2u);
}

// Adds seeded noise to the f32 field: its result depends on the sample's
// random stream only.
Transform add_noise() {
  return [](Example e, RandomStream& rng) -> absl::StatusOr<Example> {
    std::vector<float> v = to_vector<float>(e.fields[0]);
    for (float& x : v) x += static_cast<float>(rng.normal());
    e.fields[0] = from_vector<float>(v, {static_cast<int64_t>(v.size())});
    return e;
  };
}

std::vector<float> all_values(DataLoader& loader, int64_t epoch) {
  EXPECT_TRUE(loader.start_epoch(epoch).ok());
  std::vector<float> out;
  while (true) {
    auto b = value_or_die(loader.next());
    if (!b.has_value()) break;
    const std::vector<float> v = to_vector<float>(b->fields[0]);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

TEST(LoaderTest, TransformsAreDeterministicAcrossWorkerCounts) {
  auto dataset = std::make_shared<IndexDataset>(50);
  dataset->delay = std::chrono::microseconds(50);  // lets the workers interleave
  std::vector<float> reference;
  for (int workers : {0, 1, 2, 4}) {
    auto loader = make_loader(
        dataset, std::make_unique<ShuffledSampler>(50, 1),
        {.batch_size = 6, .num_workers = workers, .prefetch_depth = 3, .seed = 42, .transform = add_noise()});
    const std::vector<float> values = all_values(*loader, 3);
    if (reference.empty()) {
      reference = values;
    } else {
      EXPECT_EQ(values, reference) << "workers=" << workers;
    }
    EXPECT_NE(all_values(*loader, 4), reference);  // another epoch, other augmentations
  }
  auto other_seed = make_loader(dataset, std::make_unique<ShuffledSampler>(50, 1),
                                {.batch_size = 6, .num_workers = 2, .seed = 43, .transform = add_noise()});
  EXPECT_NE(all_values(*other_seed, 3), reference);
}

TEST(LoaderTest, WorkerErrorsReachTheCallerAndTheEpochGoesOn) {
  auto dataset = std::make_shared<IndexDataset>(20);
  dataset->fail_at = 13;
  auto loader = make_loader(dataset, std::make_unique<SequentialSampler>(20), {.batch_size = 4, .num_workers = 2});
  ASSERT_OK(loader->start_epoch(0));
  for (int b = 0; b < 3; ++b) ASSERT_OK(loader->next().status());
  expect_error(loader->next().status(), absl::StatusCode::kDataLoss, {"batch 3", "sample 13", "record is corrupt"});
  ASSERT_OK_AND_ASSIGN(std::optional<Batch> last, loader->next());
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->index, 4);
}

TEST(LoaderTest, ExceptionsFromDatasetOrTransformBecomeStatuses) {
  auto dataset = std::make_shared<IndexDataset>(8);
  dataset->throw_at = 5;
  for (int workers : {0, 2}) {
    auto loader =
        make_loader(dataset, std::make_unique<SequentialSampler>(8), {.batch_size = 2, .num_workers = workers});
    ASSERT_OK(loader->start_epoch(0));
    ASSERT_OK(loader->next().status());
    ASSERT_OK(loader->next().status());
    expect_error(loader->next().status(), absl::StatusCode::kInternal,
                 {"batch 2", "sample 5", "Dataset::get threw", "reader exploded"});
  }
  auto clean = std::make_shared<IndexDataset>(8);
  Transform throwing = [](Example, RandomStream&) -> absl::StatusOr<Example> { throw std::logic_error("bad crop"); };
  auto loader = make_loader(clean, std::make_unique<SequentialSampler>(8),
                            {.batch_size = 4, .num_workers = 1, .transform = throwing});
  ASSERT_OK(loader->start_epoch(0));
  expect_error(loader->next().status(), absl::StatusCode::kInternal,
               {"batch 0", "sample 0", "transform threw", "bad crop"});
}

TEST(LoaderTest, TensorOpErrorsThrownInWorkersReachNextAndTheEpochGoesOn) {
  // Sample 5's transform misuses a tensor op (a view of the wrong size): a
  // ts::Error thrown on a worker thread.
  Transform misuse = [](Example e, RandomStream&) -> absl::StatusOr<Example> {
    if (item<int64_t>(e.fields[1]) == 5) e.fields[0] = e.fields[0].view({3});
    return e;
  };
  const absl::Status thrown = capture([] { (void)full({2}, 0.0).view({3}); });
  ASSERT_FALSE(thrown.ok());
  for (int workers : {2, 0}) {
    auto loader = make_loader(std::make_shared<IndexDataset>(8), std::make_unique<SequentialSampler>(8),
                              {.batch_size = 2, .num_workers = workers, .transform = misuse});
    ASSERT_OK(loader->start_epoch(0));
    ASSERT_OK(loader->next().status());
    ASSERT_OK(loader->next().status());
    expect_error(loader->next().status(), thrown.code(),
                 {"batch 2", "sample 5", "transform threw", std::string(thrown.message())});
    ASSERT_OK_AND_ASSIGN(std::optional<Batch> last, loader->next());
    ASSERT_TRUE(last.has_value());
    EXPECT_EQ(last->index, 3);
  }
}

TEST(LoaderTest, CollateErrorsNameTheField) {
  auto dataset = std::make_shared<IndexDataset>(8);
  dataset->odd_shape_at = 2;
  auto loader = make_loader(dataset, std::make_unique<SequentialSampler>(8), {.batch_size = 4, .num_workers = 1});
  ASSERT_OK(loader->start_epoch(0));
  expect_error(loader->next().status(), absl::StatusCode::kInvalidArgument,
               {"batch 0", "field 0 of example 2", "f32[3]", "f32[2]"});
}

TEST(LoaderTest, ExceptionsFromCollateNameTheBatch) {
  // Field 0 becomes a view of 11 dims that no two strides merge: collate's
  // copy of it (contiguous) throws the ts::Error of a strided op.
  const Tensor unmergeable = full(Shape(11, 2), 0.0).permute({10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  const absl::Status thrown = capture([&] { (void)contiguous(unmergeable); });
  ASSERT_FALSE(thrown.ok());
  Transform strided = [&](Example e, RandomStream&) -> absl::StatusOr<Example> {
    e.fields[0] = unmergeable;
    return e;
  };
  for (int workers : {0, 2}) {
    auto loader = make_loader(std::make_shared<IndexDataset>(8), std::make_unique<SequentialSampler>(8),
                              {.batch_size = 4, .num_workers = workers, .transform = strided});
    ASSERT_OK(loader->start_epoch(0));
    expect_error(loader->next().status(), thrown.code(),
                 {"loader: batch 0", "collate threw", std::string(thrown.message())});
  }
}

TEST(LoaderTest, NextBeforeStartEpochIsAnError) {
  auto loader = make_loader(std::make_shared<IndexDataset>(4), std::make_unique<SequentialSampler>(4), {});
  expect_error(loader->next().status(), absl::StatusCode::kFailedPrecondition, {"start_epoch"});
}

TEST(LoaderTest, BadOptionsAreRejected) {
  auto dataset = std::make_shared<IndexDataset>(4);
  expect_error(DataLoader::create(dataset, std::make_unique<SequentialSampler>(4), {.batch_size = 0}).status(),
               absl::StatusCode::kInvalidArgument, {"batch_size"});
  expect_error(DataLoader::create(dataset, std::make_unique<SequentialSampler>(4), {.prefetch_depth = 0}).status(),
               absl::StatusCode::kInvalidArgument, {"prefetch_depth"});
  expect_error(DataLoader::create(dataset, std::make_unique<SequentialSampler>(4), {.num_workers = -1}).status(),
               absl::StatusCode::kInvalidArgument, {"num_workers"});
  expect_error(DataLoader::create(nullptr, std::make_unique<SequentialSampler>(4), {}).status(),
               absl::StatusCode::kInvalidArgument, {"dataset"});
}

TEST(LoaderTest, ShutsDownCleanlyAtAnyPoint) {
  auto dataset = std::make_shared<IndexDataset>(400);
  dataset->delay = std::chrono::microseconds(200);
  LoaderOptions options{.batch_size = 8, .num_workers = 3, .prefetch_depth = 4};
  // Never started.
  make_loader(dataset, std::make_unique<SequentialSampler>(400), options).reset();
  // Started, nothing consumed: workers are busy filling the queue.
  {
    auto loader = make_loader(dataset, std::make_unique<SequentialSampler>(400), options);
    ASSERT_OK(loader->start_epoch(0));
  }
  // In the middle of an epoch, with workers blocked on a full queue.
  {
    auto loader = make_loader(dataset, std::make_unique<SequentialSampler>(400), options);
    ASSERT_OK(loader->start_epoch(0));
    for (int b = 0; b < 3; ++b) ASSERT_OK(loader->next().status());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // The destructor abandoned the rest: far fewer gets than the epoch holds.
  EXPECT_LT(dataset->calls.load(), 400);
}

TEST(LoaderTest, RestartingAnEpochMidwayStartsFromItsFirstBatch) {
  auto dataset = std::make_shared<IndexDataset>(30);
  dataset->delay = std::chrono::microseconds(100);
  auto loader = make_loader(dataset, std::make_unique<ShuffledSampler>(30, 2),
                            {.batch_size = 5, .num_workers = 2, .prefetch_depth = 3});
  ASSERT_OK(loader->start_epoch(0));
  ASSERT_OK(loader->next().status());
  ASSERT_OK(loader->next().status());
  std::vector<int64_t> seen;
  for (const auto& labels : epoch_labels(*loader, 1)) seen.insert(seen.end(), labels.begin(), labels.end());
  EXPECT_EQ(seen, shuffled_range(30, 2, 1));
}

TEST(LoaderTest, AnEpochStartedAtABatchGivesTheRestOfTheFullEpoch) {
  auto dataset = std::make_shared<IndexDataset>(37);
  for (int workers : {0, 2}) {
    auto loader = make_loader(dataset, std::make_unique<ShuffledSampler>(37, 5),
                              {.batch_size = 4, .num_workers = workers, .prefetch_depth = 3});
    const std::vector<std::vector<int64_t>> full = epoch_labels(*loader, 3);
    const int64_t requests_before = dataset->calls.load();
    ASSERT_OK(loader->start_epoch(3, 6));
    for (size_t b = 6; b < full.size(); ++b) {
      ASSERT_OK_AND_ASSIGN(std::optional<Batch> batch, loader->next());
      ASSERT_TRUE(batch.has_value());
      EXPECT_EQ(batch->index, static_cast<int64_t>(b));
      EXPECT_EQ(to_vector<int64_t>(batch->fields[1]), full[b]) << "workers=" << workers << " batch " << b;
    }
    ASSERT_OK_AND_ASSIGN(std::optional<Batch> after, loader->next());
    EXPECT_FALSE(after.has_value());
    // The skipped batches were never made.
    EXPECT_EQ(dataset->calls.load() - requests_before, 37 - 6 * 4);
    expect_error(loader->start_epoch(0, loader->num_batches() + 1), absl::StatusCode::kOutOfRange,
                 {"first batch 11", "10 batches"});
  }
}

// Every request is checked when it is made against the bound the batches
// consumed so far allow (raised before each next(), so it is never below
// what the loader may do), so a worker running ahead fails the test however
// the threads are scheduled, without waiting to see whether it does.
TEST(LoaderTest, WorkersNeverRunMoreThanPrefetchDepthAhead) {
  const int64_t batch = 4, depth = 3;
  auto dataset = std::make_shared<IndexDataset>(200);
  auto loader = make_loader(dataset, std::make_unique<SequentialSampler>(200),
                            {.batch_size = batch, .num_workers = 4, .prefetch_depth = static_cast<int>(depth)});
  // k batches delivered: batches up to k - 1 + depth may exist, no further.
  const auto limit = [&](int64_t delivered) { return (delivered + depth) * batch - 1; };
  dataset->allowed = limit(0);
  ASSERT_OK(loader->start_epoch(0));
  int64_t batch_bytes = 0;
  for (int64_t k = 0; k < 10; ++k) {
    dataset->allowed = limit(k + 1);
    ASSERT_OK_AND_ASSIGN(std::optional<Batch> b, loader->next());
    ASSERT_TRUE(b.has_value());
    batch_bytes = b->fields[0].numel() * 4 + b->fields[1].numel() * 8;
    // The workers do prefetch: they reach the bound (a deadline only for a
    // failure to).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (dataset->max_requested.load() < limit(k + 1) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_GE(dataset->max_requested.load(), limit(k + 1)) << "after batch " << k;
    EXPECT_EQ(dataset->beyond_allowed.load(), -1) << "after batch " << k << ": a request past " << limit(k + 1);
    // Pooled batch memory: the queue plus the batch the test holds.
    EXPECT_LE(loader->memory_stats().in_use_bytes, (depth + 1) * batch_bytes);
  }
}

// get(i) = {i64 scalar: the threads the CPU backend would use on this thread}.
class ThreadsDataset : public Dataset {
 public:
  int64_t size() const override { return 4; }
  absl::StatusOr<Example> get(int64_t) const override {
    Example e;
    e.fields.push_back(full({}, cpu::num_threads(), {DType::kI64}));
    return e;
  }
};

TEST(LoaderTest, WorkersRunTheirOpsSerially) {
  // Each worker with a thread team of its own would compete with the
  // training thread for the cores; without workers the loading is the
  // training thread's own, with its team.
  for (int workers : {0, 2}) {
    auto loader = make_loader(std::make_shared<ThreadsDataset>(), std::make_unique<SequentialSampler>(4),
                              {.batch_size = 2, .num_workers = workers});
    ASSERT_OK(loader->start_epoch(0));
    for (int b = 0; b < 2; ++b) {
      absl::StatusOr<std::optional<Batch>> batch = loader->next();
      ASSERT_OK(batch.status());
      ASSERT_TRUE(batch->has_value());
      for (int64_t threads : to_vector<int64_t>((*batch)->fields[0])) {
        EXPECT_EQ(threads, workers == 0 ? cpu::num_threads() : 1) << workers << " workers";
      }
    }
  }
}

}  // namespace
}  // namespace ts::data
