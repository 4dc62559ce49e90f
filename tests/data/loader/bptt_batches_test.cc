// BpttBatches: windows cover a batchified stream in order, time-major, with
// the next tokens as targets and the start column; random lengths follow the
// seed and the epoch (the same for every rank and after a resume), differ
// between epochs and from the tensor ops' generator of the same seed, and a
// resumed epoch skips to its window; a failed start_epoch changes nothing;
// bad input is an error naming what is wrong.
#include "data/loader/bptt_batches.h"

#include <numeric>
#include <vector>

#include "data/readers/lm_text.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;

// Rows of n consecutive ids: row b holds b * 1000 + [0, n).
Tensor rows(int64_t batch, int64_t n) {
  std::vector<int64_t> ids;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < n; ++t) ids.push_back(b * 1000 + t);
  }
  return from_vector<int64_t>(ids, {batch, n});
}

std::vector<Batch> epoch_of(BpttBatches& batches, int64_t epoch, int64_t first = 0) {
  EXPECT_OK(batches.start_epoch(epoch, first));
  std::vector<Batch> out;
  while (true) {
    absl::StatusOr<std::optional<Batch>> b = batches.next();
    EXPECT_OK(b.status());
    if (!b.ok() || !b->has_value()) break;
    out.push_back(**b);
  }
  return out;
}

TEST(BpttBatchesTest, FixedWindowsCoverTheRowsInOrder) {
  ASSERT_OK_AND_ASSIGN(auto batches, BpttBatches::create(rows(3, 11), {.bptt = 4}));
  EXPECT_EQ(batches->num_batches(), 3);  // 10 targets per row: 4 + 4 + 2
  const std::vector<Batch> windows = epoch_of(*batches, 0);
  ASSERT_EQ(windows.size(), 3u);
  const int64_t starts[] = {0, 4, 8}, lengths[] = {4, 4, 2};
  for (int k = 0; k < 3; ++k) {
    const Batch& w = windows[k];
    EXPECT_EQ(w.index, k);
    ASSERT_EQ(w.fields.size(), 3u);
    EXPECT_EQ(w.fields[0].shape(), (Shape{lengths[k], 3}));
    EXPECT_EQ(item<int64_t>(w.fields[2]), starts[k]);
    const auto input = to_vector<int64_t>(w.fields[0]);
    const auto target = to_vector<int64_t>(w.fields[1]);
    for (int64_t t = 0; t < lengths[k]; ++t) {
      for (int64_t b = 0; b < 3; ++b) {
        EXPECT_EQ(input[t * 3 + b], b * 1000 + starts[k] + t);
        EXPECT_EQ(target[t * 3 + b], b * 1000 + starts[k] + t + 1);
      }
    }
  }
}

// AWD-LSTM's training loop stops short of a last window of one token.
TEST(BpttBatchesTest, ASingleTokenTailCanBeSkipped) {
  for (const bool skip : {false, true}) {
    SCOPED_TRACE(skip ? "skipped" : "taken");
    ASSERT_OK_AND_ASSIGN(auto batches, BpttBatches::create(rows(2, 10), {.bptt = 4, .skip_single_token_tail = skip}));
    const std::vector<int64_t> lengths = skip ? std::vector<int64_t>{4, 4} : std::vector<int64_t>{4, 4, 1};
    EXPECT_EQ(batches->lengths(), lengths);
  }
  // A tail of two tokens stays.
  ASSERT_OK_AND_ASSIGN(auto batches, BpttBatches::create(rows(2, 11), {.bptt = 4, .skip_single_token_tail = true}));
  EXPECT_EQ(batches->lengths(), (std::vector<int64_t>{4, 4, 2}));
}

TEST(BpttBatchesTest, RandomLengthsFollowTheSeedAndTheEpoch) {
  const BpttOptions options{.bptt = 20, .random_lengths = true, .min_length = 5, .seed = 7};
  ASSERT_OK_AND_ASSIGN(auto a, BpttBatches::create(rows(2, 2001), options));
  ASSERT_OK_AND_ASSIGN(auto b, BpttBatches::create(rows(2, 2001), options));
  ASSERT_OK(a->start_epoch(3));
  ASSERT_OK(b->start_epoch(3));
  EXPECT_EQ(a->lengths(), b->lengths()) << "two ranks with one seed take the same steps";
  const std::vector<int64_t> epoch3 = a->lengths();
  EXPECT_EQ(std::accumulate(epoch3.begin(), epoch3.end(), int64_t{0}), 2000);
  int halves = 0;
  for (size_t k = 0; k + 1 < epoch3.size(); ++k) {
    EXPECT_GE(epoch3[k], 5);
    EXPECT_LE(epoch3[k], 20 + 5 * 6);
    if (epoch3[k] < 14) ++halves;  // drawn around bptt / 2
  }
  EXPECT_GT(halves, 0);
  EXPECT_LT(halves, static_cast<int>(epoch3.size()) / 5);
  ASSERT_OK(a->start_epoch(4));
  EXPECT_NE(a->lengths(), epoch3);
  // A resumed epoch: the same windows from the one it stopped at.
  const std::vector<Batch> all = epoch_of(*a, 3);
  const std::vector<Batch> rest = epoch_of(*b, 3, 5);
  ASSERT_EQ(rest.size() + 5, all.size());
  for (size_t k = 0; k < rest.size(); ++k) {
    EXPECT_EQ(rest[k].index, all[k + 5].index);
    EXPECT_EQ(to_vector<int64_t>(rest[k].fields[0]), to_vector<int64_t>(all[k + 5].fields[0]));
  }
}

// run_task seeds the tensor ops' generator (weight init, dropout) with the
// config's seed, the one the windows get: their lengths must not be drawn
// from the same numbers.
TEST(BpttBatchesTest, RandomLengthsAreNotTheOpsGeneratorsNumbers) {
  const BpttOptions options{.bptt = 20, .random_lengths = true, .min_length = 5, .seed = 7};
  ASSERT_OK_AND_ASSIGN(auto batches, BpttBatches::create(rows(2, 2001), options));
  for (int64_t epoch : {0, 1}) {
    ASSERT_OK(batches->start_epoch(epoch));
    Generator ops(options.seed);
    std::vector<int64_t> from_ops;
    for (int k = 0; k < 20; ++k) from_ops.push_back(random_bptt_length(options.bptt, ops, options.min_length));
    const std::vector<int64_t> first(batches->lengths().begin(), batches->lengths().begin() + 20);
    EXPECT_NE(first, from_ops) << "epoch " << epoch;
  }
}

// A start_epoch that fails (a first batch past the end) changes nothing: the
// epoch under way goes on with the windows it had.
TEST(BpttBatchesTest, AFailedStartEpochLeavesTheEpochGoingOn) {
  const BpttOptions options{.bptt = 20, .random_lengths = true, .min_length = 5, .seed = 7};
  ASSERT_OK_AND_ASSIGN(auto reference, BpttBatches::create(rows(2, 2001), options));
  const std::vector<Batch> epoch3 = epoch_of(*reference, 3);
  ASSERT_GT(epoch3.size(), 2u);
  ASSERT_OK_AND_ASSIGN(auto batches, BpttBatches::create(rows(2, 2001), options));
  ASSERT_OK(batches->start_epoch(3));
  for (int k = 0; k < 2; ++k) ASSERT_OK(batches->next().status());
  expect_error(batches->start_epoch(4, 100000), absl::StatusCode::kOutOfRange, {"first batch 100000"});
  EXPECT_EQ(batches->lengths(), reference->lengths());
  for (size_t k = 2; k < epoch3.size(); ++k) {
    ASSERT_OK_AND_ASSIGN(std::optional<Batch> b, batches->next());
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->index, epoch3[k].index);
    EXPECT_EQ(to_vector<int64_t>(b->fields[0]), to_vector<int64_t>(epoch3[k].fields[0]));
  }
  ASSERT_OK_AND_ASSIGN(std::optional<Batch> end, batches->next());
  EXPECT_FALSE(end.has_value());
}

TEST(BpttBatchesTest, BadInputIsNamed) {
  expect_error(BpttBatches::create(from_vector<int64_t>({1, 2, 3}, {3}), {}).status(),
               absl::StatusCode::kInvalidArgument, {"BpttBatches", "[batch, n]"});
  expect_error(BpttBatches::create(rows(2, 1), {}).status(), absl::StatusCode::kInvalidArgument, {"n >= 2"});
  expect_error(BpttBatches::create(to(rows(2, 5), DType::kF32), {}).status(), absl::StatusCode::kInvalidArgument,
               {"i64"});
  expect_error(BpttBatches::create(rows(2, 5), {.bptt = 0}).status(), absl::StatusCode::kInvalidArgument, {"bptt 0"});
  ASSERT_OK_AND_ASSIGN(auto batches, BpttBatches::create(rows(2, 9), {.bptt = 4}));
  expect_error(batches->next().status(), absl::StatusCode::kFailedPrecondition, {"start_epoch first"});
  expect_error(batches->start_epoch(0, 3), absl::StatusCode::kOutOfRange, {"first batch 3", "2 windows"});
}

}  // namespace
}  // namespace ts::data
