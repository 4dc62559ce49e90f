// SyntheticTokenStream: windows consistent with the stream, determinism,
// and low entropy (a bigram predictor far above chance).
#include "data/synthetic/tokens.h"

#include <map>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

std::vector<int64_t> tokens(const SyntheticTokenStream& s, int64_t start, int64_t count) {
  return to_vector<int64_t>(value_or_die(s.tokens(start, count)));
}

TEST(SyntheticTokensTest, WindowsAreShiftedPiecesOfOneStream) {
  auto s =
      value_or_die(SyntheticTokenStream::create({.vocab_size = 1000, .num_windows = 100, .seq_len = 35, .seed = 2}));
  const std::vector<int64_t> stream = tokens(*s, 0, 100 * 35 + 1);
  for (int64_t i : {0, 1, 29, 30, 99}) {  // windows 29 and 30 straddle a chain restart
    ASSERT_OK_AND_ASSIGN(Example e, s->get(i));
    EXPECT_EQ(e.fields[0].describe(), "i64[35] on cpu");
    EXPECT_EQ(to_vector<int64_t>(e.fields[0]),
              std::vector<int64_t>(stream.begin() + i * 35, stream.begin() + i * 35 + 35));
    EXPECT_EQ(to_vector<int64_t>(e.fields[1]),
              std::vector<int64_t>(stream.begin() + i * 35 + 1, stream.begin() + i * 35 + 36));
  }
  // Any range reads the same tokens.
  EXPECT_EQ(tokens(*s, 1000, 50), std::vector<int64_t>(stream.begin() + 1000, stream.begin() + 1050));
  for (int64_t t : stream) {
    ASSERT_GE(t, 0);
    ASSERT_LT(t, 1000);
  }
  auto same = value_or_die(SyntheticTokenStream::create({.vocab_size = 1000, .seed = 2}));
  auto other = value_or_die(SyntheticTokenStream::create({.vocab_size = 1000, .seed = 3}));
  EXPECT_EQ(tokens(*same, 0, 500), tokens(*s, 0, 500));
  EXPECT_NE(tokens(*other, 0, 500), tokens(*s, 0, 500));
  expect_error(s->get(100).status(), absl::StatusCode::kOutOfRange, {"index 100"});
}

TEST(SyntheticTokensTest, ABigramModelPredictsFarAboveChance) {
  auto s = value_or_die(SyntheticTokenStream::create({.vocab_size = 500, .seed = 4}));
  const std::vector<int64_t> train = tokens(*s, 0, 200000);
  const std::vector<int64_t> test = tokens(*s, 300000, 20000);
  std::map<int64_t, std::map<int64_t, int64_t>> counts;
  for (size_t i = 0; i + 1 < train.size(); ++i) ++counts[train[i]][train[i + 1]];
  int64_t correct = 0;
  for (size_t i = 0; i + 1 < test.size(); ++i) {
    int64_t best = -1, best_count = 0;
    for (const auto& [next, count] : counts[test[i]]) {
      if (count > best_count) best = next, best_count = count;
    }
    correct += best == test[i + 1];
  }
  const double accuracy = static_cast<double>(correct) / (test.size() - 1);
  EXPECT_GT(accuracy, 0.4) << "chance is 1/500";  // the top successor has probability 1/2
  EXPECT_LT(accuracy, 0.7);                       // but the stream is not deterministic
}

}  // namespace
}  // namespace ts::data
