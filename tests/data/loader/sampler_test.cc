// Samplers: orders, per-epoch shuffling, distributed shards (disjoint,
// covering, equal length on every rank, padded or dropped), batching.
#include "data/loader/sampler.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;

std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(SamplerTest, SequentialVisitsInOrder) {
  SequentialSampler s(5);
  EXPECT_EQ(s.indices(), range(5));
  s.set_epoch(3);
  EXPECT_EQ(s.indices(), range(5));
  EXPECT_EQ(s.size(), 5);
}

TEST(SamplerTest, ShuffledIsAPermutationFixedBySeedAndEpoch) {
  ShuffledSampler a(1000, 7), b(1000, 7), other_seed(1000, 8);
  const std::vector<int64_t> first = a.indices();
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, range(1000));
  EXPECT_NE(first, range(1000));
  EXPECT_EQ(b.indices(), first);           // same seed, same epoch
  EXPECT_NE(other_seed.indices(), first);  // another seed
  a.set_epoch(1);
  const std::vector<int64_t> second = a.indices();
  EXPECT_NE(second, first);  // a new order each epoch
  b.set_epoch(1);
  EXPECT_EQ(b.indices(), second);
  a.set_epoch(0);
  EXPECT_EQ(a.indices(), first);  // epochs replay
}

TEST(SamplerTest, ShuffleUsesEveryPosition) {
  // Over many epochs every index lands in the first slot now and then: the
  // permutation is not stuck on a few values.
  std::set<int64_t> firsts;
  for (int64_t e = 0; e < 400; ++e) firsts.insert(shuffled_range(10, 1, e)[0]);
  EXPECT_EQ(firsts.size(), 10u);
}

struct Shards {
  std::vector<std::vector<int64_t>> per_rank;
};

Shards shards_of(int64_t n, int replicas, DistributedOptions options, int64_t epoch) {
  Shards out;
  for (int r = 0; r < replicas; ++r) {
    auto sampler = ::ts::testing::value_or_die(DistributedSampler::create(n, replicas, r, options));
    sampler->set_epoch(epoch);
    EXPECT_EQ(static_cast<int64_t>(sampler->indices().size()), sampler->size());
    out.per_rank.push_back(sampler->indices());
  }
  return out;
}

TEST(SamplerTest, DistributedShardsPaddedCoverEverySampleWithEqualLengths) {
  for (int64_t n : {1, 2, 5, 10, 17, 100, 101}) {
    for (int replicas : {1, 2, 3, 4, 7, 8}) {
      for (bool shuffle : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "n=" << n << " replicas=" << replicas << " shuffle=" << shuffle);
        const Shards s = shards_of(n, replicas, {.shuffle = shuffle, .seed = 3}, 2);
        const int64_t per_rank = (n + replicas - 1) / replicas;
        std::map<int64_t, int> seen;
        for (const auto& shard : s.per_rank) {
          EXPECT_EQ(static_cast<int64_t>(shard.size()), per_rank);  // same number of steps everywhere
          for (int64_t i : shard) {
            ASSERT_GE(i, 0);
            ASSERT_LT(i, n);
            ++seen[i];
          }
        }
        EXPECT_EQ(static_cast<int64_t>(seen.size()), n);  // coverage
        // Only the wrapped padding repeats samples.
        int64_t repeats = 0;
        for (const auto& [i, count] : seen) repeats += count - 1;
        EXPECT_EQ(repeats, per_rank * replicas - n);
      }
    }
  }
}

TEST(SamplerTest, DistributedShardsDroppedAreDisjointWithEqualLengths) {
  for (int64_t n : {0, 1, 5, 10, 17, 100, 101}) {
    for (int replicas : {1, 2, 3, 4, 7, 8}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " replicas=" << replicas);
      const Shards s =
          shards_of(n, replicas, {.shuffle = true, .seed = 5, .remainder = DistributedOptions::Remainder::kDrop}, 0);
      std::set<int64_t> seen;
      for (const auto& shard : s.per_rank) {
        EXPECT_EQ(static_cast<int64_t>(shard.size()), n / replicas);
        for (int64_t i : shard) EXPECT_TRUE(seen.insert(i).second) << "index " << i << " on two ranks";
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), (n / replicas) * replicas);
    }
  }
}

// For evaluation: every sample exactly once, the first n % replicas ranks
// taking one more.
TEST(SamplerTest, DistributedShardsUnevenSeeEverySampleOnce) {
  for (int64_t n : {0, 1, 5, 10, 17, 100, 101}) {
    for (int replicas : {1, 2, 3, 4, 7, 8}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " replicas=" << replicas);
      const Shards s =
          shards_of(n, replicas, {.shuffle = false, .remainder = DistributedOptions::Remainder::kUneven}, 0);
      std::multiset<int64_t> seen;
      for (int r = 0; r < replicas; ++r) {
        EXPECT_EQ(static_cast<int64_t>(s.per_rank[r].size()), n / replicas + (r < n % replicas ? 1 : 0));
        seen.insert(s.per_rank[r].begin(), s.per_rank[r].end());
      }
      std::multiset<int64_t> all;
      for (int64_t i = 0; i < n; ++i) all.insert(i);
      EXPECT_EQ(seen, all);
    }
  }
}

TEST(SamplerTest, DistributedRanksAgreeOnOneShuffledOrder) {
  // Interleaving the shards rank by rank gives back one permutation: every
  // rank drew the same order from (seed, epoch), and that order changes with
  // the epoch.
  const int64_t n = 60;
  const int replicas = 4;
  for (int64_t epoch : {0, 1}) {
    const Shards s = shards_of(n, replicas, {.shuffle = true, .seed = 11}, epoch);
    std::vector<int64_t> interleaved;
    for (size_t step = 0; step < s.per_rank[0].size(); ++step) {
      for (int r = 0; r < replicas; ++r) interleaved.push_back(s.per_rank[r][step]);
    }
    EXPECT_EQ(interleaved, shuffled_range(n, 11, epoch));
  }
  EXPECT_NE(shards_of(n, replicas, {.shuffle = true, .seed = 11}, 0).per_rank[0],
            shards_of(n, replicas, {.shuffle = true, .seed = 11}, 1).per_rank[0]);
}

TEST(SamplerTest, DistributedErrorsNameTheProblem) {
  expect_error(DistributedSampler::create(10, 4, 4).status(), absl::StatusCode::kInvalidArgument, {"rank 4", "[0, 4)"});
  expect_error(DistributedSampler::create(10, 4, -1).status(), absl::StatusCode::kInvalidArgument, {"rank -1"});
  expect_error(DistributedSampler::create(10, 0, 0).status(), absl::StatusCode::kInvalidArgument, {"num_replicas"});
  expect_error(DistributedSampler::create(0, 2, 0).status(), absl::StatusCode::kInvalidArgument, {"empty"});
  EXPECT_TRUE(DistributedSampler::create(0, 2, 0, {.remainder = DistributedOptions::Remainder::kDrop}).ok());
}

std::vector<std::vector<int64_t>> batches_of(int64_t n, int64_t batch, bool drop_last) {
  auto bs = ::ts::testing::value_or_die(BatchSampler::create(std::make_unique<SequentialSampler>(n), batch, drop_last));
  std::vector<std::vector<int64_t>> out = bs.batches();
  EXPECT_EQ(static_cast<int64_t>(out.size()), bs.num_batches());
  return out;
}

TEST(BatchSamplerTest, GroupsIndicesKeepingOrDroppingTheShortTail) {
  EXPECT_EQ(batches_of(7, 3, false), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(batches_of(7, 3, true), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(batches_of(6, 3, false).size(), 2u);
  EXPECT_EQ(batches_of(2, 3, true).size(), 0u);
  EXPECT_EQ(batches_of(0, 3, false).size(), 0u);
  expect_error(BatchSampler::create(std::make_unique<SequentialSampler>(4), 0, false).status(),
               absl::StatusCode::kInvalidArgument, {"batch_size", "0"});
}

TEST(BatchSamplerTest, EveryRankRunsTheSameNumberOfSteps) {
  for (int64_t n : {10, 33, 64}) {
    for (bool drop_last : {false, true}) {
      std::set<int64_t> steps;
      for (int r = 0; r < 3; ++r) {
        DistributedOptions options;
        if (drop_last) options.remainder = DistributedOptions::Remainder::kDrop;
        auto sampler = ::ts::testing::value_or_die(DistributedSampler::create(n, 3, r, options));
        auto bs = ::ts::testing::value_or_die(BatchSampler::create(std::move(sampler), 4, false));
        steps.insert(bs.num_batches());
      }
      EXPECT_EQ(steps.size(), 1u) << "n=" << n;
    }
  }
}

}  // namespace
}  // namespace ts::data
