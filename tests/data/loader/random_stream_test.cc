// RandomStream: a pure function of (key, stream, draw), with the ranges and
// rough distributions its users rely on.
#include "data/loader/random_stream.h"

#include <cmath>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace ts::data {
namespace {

std::vector<uint32_t> draws(RandomStream rng, int n) {
  std::vector<uint32_t> out(n);
  for (uint32_t& x : out) x = rng.next_u32();
  return out;
}

TEST(RandomStreamTest, SameKeyAndStreamGiveTheSameNumbers) {
  EXPECT_EQ(draws(RandomStream::for_sample(1, 2, 3), 9), draws(RandomStream::for_sample(1, 2, 3), 9));
  EXPECT_NE(draws(RandomStream::for_sample(1, 2, 3), 9), draws(RandomStream::for_sample(1, 2, 4), 9));
  EXPECT_NE(draws(RandomStream::for_sample(1, 2, 3), 9), draws(RandomStream::for_sample(1, 3, 3), 9));
  EXPECT_NE(draws(RandomStream::for_sample(1, 2, 3), 9), draws(RandomStream::for_sample(2, 2, 3), 9));
}

// One seed feeds every use (the tasks pass the config's seed to the loader,
// the synthetic sets, the BPTT windows and the tensor ops' generator): no two
// uses, nor two parts of one, may share a key, and none may be the seed,
// which the ops' generator keys Philox with.
TEST(RandomStreamTest, EachUseOfASeedHasItsOwnKeys) {
  const SeedUse uses[] = {SeedUse::kSampleTransform, SeedUse::kShuffle, SeedUse::kSynthetic, SeedUse::kBpttLengths,
                          SeedUse::kTokenBuckets};
  for (uint64_t seed : {0, 1, 2, 3, 12}) {
    std::set<uint64_t> keys = {seed};
    for (SeedUse use : uses) {
      for (uint64_t part = 0; part < 40; ++part) {
        EXPECT_TRUE(keys.insert(RandomStream::key_for(seed, use, part)).second)
            << "seed " << seed << ", use " << static_cast<int>(use) << ", part " << part;
      }
    }
  }
  // The loader's stream for a sample in epoch 2 is not a synthetic set's
  // stream 2 for it (images.cc draws its labels from salt 2).
  EXPECT_NE(draws(RandomStream::for_sample(5, 2, 7), 9),
            draws(RandomStream(RandomStream::key_for(5, SeedUse::kSynthetic, 2), 7), 9));
}

TEST(RandomStreamTest, RangesAndMoments) {
  RandomStream rng(5, 6);
  const int n = 200000;
  double sum = 0, sum_sq = 0, normal_sum = 0, normal_sq = 0;
  std::vector<int> counts(7, 0);
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
    const int64_t k = rng.uniform_int(7);
    ASSERT_GE(k, 0);
    ASSERT_LT(k, 7);
    ++counts[k];
    const double z = rng.normal();
    normal_sum += z;
    normal_sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sum_sq / n - 0.25, 1.0 / 12, 0.002);
  for (int c : counts) EXPECT_NEAR(c, n / 7.0, 5 * std::sqrt(n / 7.0));
  EXPECT_NEAR(normal_sum / n, 0.0, 0.01);
  EXPECT_NEAR(normal_sq / n, 1.0, 0.02);
  EXPECT_EQ(rng.uniform_int(1), 0);
}

}  // namespace
}  // namespace ts::data
