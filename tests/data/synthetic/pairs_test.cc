// SyntheticSentencePairs: the bos/eos form of the real translation batches,
// determinism, and a target that is a fixed function of the source.
#include "data/synthetic/pairs.h"

#include <set>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

TEST(SyntheticPairsTest, TargetIsTheMappedReversalOfTheSource) {
  auto set = value_or_die(
      SyntheticSentencePairs::create({.size = 200, .vocab_size = 300, .min_words = 2, .max_words = 9, .seed = 1}));
  std::set<size_t> lengths;
  for (int64_t i = 0; i < 200; ++i) {
    ASSERT_OK_AND_ASSIGN(Example e, set->get(i));
    const std::vector<int64_t> src = to_vector<int64_t>(e.fields[0]);
    const std::vector<int64_t> tgt = to_vector<int64_t>(e.fields[1]);
    ASSERT_EQ(src.size(), tgt.size());
    const size_t n = src.size() - 2;
    ASSERT_GE(n, 2u);
    ASSERT_LE(n, 9u);
    lengths.insert(n);
    EXPECT_EQ(src.front(), SyntheticSentencePairs::kBos);
    EXPECT_EQ(src.back(), SyntheticSentencePairs::kEos);
    EXPECT_EQ(tgt.front(), SyntheticSentencePairs::kBos);
    EXPECT_EQ(tgt.back(), SyntheticSentencePairs::kEos);
    for (size_t w = 1; w <= n; ++w) {
      ASSERT_GE(src[w], SyntheticSentencePairs::kFirstWord);
      ASSERT_LT(src[w], 300);
      EXPECT_EQ(tgt[w], set->translate(src[n + 1 - w]));
    }
  }
  EXPECT_EQ(lengths.size(), 8u);  // every length in [2, 9] occurs
}

TEST(SyntheticPairsTest, TheWordMapIsAPermutationAndTheSetIsDeterministic) {
  auto set = value_or_die(SyntheticSentencePairs::create({.vocab_size = 100, .seed = 7}));
  std::set<int64_t> images;
  int64_t fixed_points = 0;
  for (int64_t w = SyntheticSentencePairs::kFirstWord; w < 100; ++w) {
    images.insert(set->translate(w));
    fixed_points += set->translate(w) == w;
  }
  EXPECT_EQ(images.size(), 96u);
  EXPECT_EQ(*images.begin(), SyntheticSentencePairs::kFirstWord);
  EXPECT_LT(fixed_points, 10);  // a real mapping, not the identity
  auto again = value_or_die(SyntheticSentencePairs::create({.vocab_size = 100, .seed = 7}));
  EXPECT_EQ(to_vector<int64_t>(value_or_die(set->get(5)).fields[1]),
            to_vector<int64_t>(value_or_die(again->get(5)).fields[1]));
  expect_error(SyntheticSentencePairs::create({.min_words = 5, .max_words = 4}).status(),
               absl::StatusCode::kInvalidArgument, {"max_words", "at least 5"});
}

}  // namespace
}  // namespace ts::data
