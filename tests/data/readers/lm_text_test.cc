#include "data/readers/lm_text.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/test_files.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::gzip;
using ::ts::data::testing::write_temp;
using ::ts::testing::expect_error;

TEST(LmTextTest, VocabularyFromTrainInOrderOfFirstUse) {
  ASSERT_OK_AND_ASSIGN(Vocabulary v, build_lm_vocabulary(" the cat\n\nsat  on the\tmat \n", "train"));
  ASSERT_EQ(v.size(), 7);
  const std::vector<std::string> expected = {"<unk>", "<eos>", "the", "cat", "sat", "on", "mat"};
  for (int64_t i = 0; i < v.size(); ++i) EXPECT_EQ(v.word(i), expected[i]);
}

TEST(LmTextTest, RareWordsBecomeUnknownBelowMinCount) {
  const std::string train = "a b a\nc a b\n";  // a: 3, b: 2, c: 1
  ASSERT_OK_AND_ASSIGN(Vocabulary v, build_lm_vocabulary(train, "train", /*min_count=*/2));
  ASSERT_EQ(v.size(), 4);  // <unk> <eos> a b, still in order of first use
  EXPECT_EQ(v.word(2), "a");
  EXPECT_EQ(v.word(3), "b");
  ASSERT_OK_AND_ASSIGN(auto ids, tokenize_lm(train, "train", v));
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 3, 2, 1, 0, 2, 3, 1}));
  ASSERT_OK_AND_ASSIGN(LmCorpus corpus, make_lm_corpus({"t", train}, {"v", "c a\n"}, {"x", ""}, 3));
  EXPECT_EQ(corpus.vocab.size(), 3);
  EXPECT_EQ(to_vector<int64_t>(corpus.valid), (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(corpus.test.numel(), 0);
  expect_error(build_lm_vocabulary(train, "wiki.train.tokens", 0).status(), absl::StatusCode::kInvalidArgument,
               {"wiki.train.tokens", "min_count 0"});
}

TEST(LmTextTest, OneEosPerLineAndUnknownWords) {
  ASSERT_OK_AND_ASSIGN(Vocabulary v, build_lm_vocabulary("a b <unk>\nc\n", "train"));
  // Empty lines still end with <eos>; a final line without '\n' counts.
  ASSERT_OK_AND_ASSIGN(auto ids, tokenize_lm("a zebra\n\nc b", "valid", v));
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 0, 1, 1, 4, 3, 1}));
  ASSERT_OK_AND_ASSIGN(auto none, tokenize_lm("", "valid", v));
  EXPECT_TRUE(none.empty());
  Vocabulary foreign;
  foreign.add("x");
  expect_error(tokenize_lm("x", "valid", foreign).status(), absl::StatusCode::kInvalidArgument,
               {"valid", "build_lm_vocabulary"});
}

// As Python's `line.split()` over a file read in text mode: \r and \r\n end
// lines too, and Unicode's spaces (U+00A0, U+2009, U+3000, ...) and \x1c-\x1f
// split tokens; other non-ASCII characters (U+20AC, U+2010) do not.
TEST(LmTextTest, LinesAndWhitespaceAsPythonSplitsThem) {
  const std::string text =
      "a"
      "\xc2\xa0"
      "b"
      "\xe2\x80\x89"
      "c\rd\r\ne"
      "\x1f"
      "f"
      "\xe3\x80\x80"
      "g"
      "\xe2\x82\xac"
      "h"
      "\xe2\x80\x90"
      "i"
      "\xe2\x80\xa8"
      "j\n";
  ASSERT_OK_AND_ASSIGN(Vocabulary v, build_lm_vocabulary(text, "train"));
  const std::vector<std::string> expected = {"<unk>",
                                             "<eos>",
                                             "a",
                                             "b",
                                             "c",
                                             "d",
                                             "e",
                                             "f",
                                             "g"
                                             "\xe2\x82\xac"
                                             "h"
                                             "\xe2\x80\x90"
                                             "i",
                                             "j"};
  ASSERT_EQ(v.size(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < v.size(); ++i) EXPECT_EQ(v.word(i), expected[i]) << i;
  ASSERT_OK_AND_ASSIGN(auto ids, tokenize_lm(text, "train", v));
  EXPECT_EQ(ids, (std::vector<int64_t>{2, 3, 4, 1, 5, 1, 6, 7, 8, 9, 1}));
}

TEST(LmTextTest, BadUtf8NamesFileLineAndColumn) {
  expect_error(build_lm_vocabulary("ok\nfine \xc3\x28 x\n", "wiki.train.tokens").status(),
               absl::StatusCode::kInvalidArgument, {"wiki.train.tokens:2:6:", "invalid UTF-8 byte 0xc3"});
  ASSERT_OK_AND_ASSIGN(Vocabulary v, build_lm_vocabulary("\xc3\xa4 \xe2\x82\xac\n", "train"));
  EXPECT_EQ(v.word(2), "\xc3\xa4");
  expect_error(tokenize_lm("a\n\n\xed\xa0\x80\n", "valid", v).status(), absl::StatusCode::kInvalidArgument,
               {"valid:3:1:", "invalid UTF-8"});
}

TEST(LmTextTest, LoadsSplitsFromFiles) {
  const std::string dir = ::testing::TempDir();
  write_temp("wiki.train.tokens", " = Title = \n the cat sat \n");
  write_temp("wiki.valid.tokens", gzip(" the dog \n"));
  write_temp("wiki.test.tokens", " cat \n");
  ASSERT_OK_AND_ASSIGN(LmCorpus corpus, load_wikitext(dir));
  EXPECT_EQ(corpus.vocab.size(), 7);  // <unk> <eos> = Title the cat sat
  const auto train = to_vector<int64_t>(corpus.train);
  EXPECT_EQ(train, (std::vector<int64_t>{2, 3, 2, 1, 4, 5, 6, 1}));
  const auto valid = to_vector<int64_t>(corpus.valid);
  EXPECT_EQ(valid, (std::vector<int64_t>{4, 0, 1}));
  const auto test = to_vector<int64_t>(corpus.test);
  EXPECT_EQ(test, (std::vector<int64_t>{5, 1}));

  const std::string empty = write_temp("empty.tokens", "");
  expect_error(load_lm_corpus(empty, empty, empty).status(), absl::StatusCode::kInvalidArgument,
               {"empty.tokens", "empty train split"});
  const std::string bad = write_temp("bad.tokens", "a\n\xff\n");
  expect_error(load_lm_corpus(dir + "/wiki.train.tokens", bad, bad).status(), absl::StatusCode::kInvalidArgument,
               {"bad.tokens:2:1:", "invalid UTF-8"});
  expect_error(load_wikitext("/nonexistent").status(), absl::StatusCode::kNotFound, {"/nonexistent/wiki.train.tokens"});
}

TEST(LmTextTest, BatchifyAndWindows) {
  std::vector<int64_t> stream(23);
  for (int i = 0; i < 23; ++i) stream[i] = i;
  const Tensor s = from_vector<int64_t>(stream, {23});
  ASSERT_OK_AND_ASSIGN(Tensor b, batchify(s, 4));
  EXPECT_EQ(b.shape(), Shape({4, 5}));  // 3 tokens dropped
  const auto rows = to_vector<int64_t>(b);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 5; ++c) EXPECT_EQ(rows[r * 5 + c], r * 5 + c);
  }
  ASSERT_OK_AND_ASSIGN(BpttWindow w, bptt_window(b, 1, 2));
  const auto input = to_vector<int64_t>(w.input);
  const auto target = to_vector<int64_t>(w.target);
  EXPECT_EQ(input, (std::vector<int64_t>{1, 2, 6, 7, 11, 12, 16, 17}));
  EXPECT_EQ(target, (std::vector<int64_t>{2, 3, 7, 8, 12, 13, 17, 18}));
  // The last window is cut short so the target stays inside.
  ASSERT_OK_AND_ASSIGN(BpttWindow last, bptt_window(b, 3, 10));
  EXPECT_EQ(last.input.shape(), Shape({4, 1}));
  const auto last_target = to_vector<int64_t>(last.target);
  EXPECT_EQ(last_target, (std::vector<int64_t>{4, 9, 14, 19}));

  expect_error(bptt_window(b, 4, 1).status(), absl::StatusCode::kOutOfRange, {"bptt_window", "start 4"});
  expect_error(bptt_window(s, 0, 1).status(), absl::StatusCode::kInvalidArgument, {"bptt_window", "i64[23]"});
  expect_error(batchify(s, 24).status(), absl::StatusCode::kInvalidArgument, {"batchify", "batch 24"});
  expect_error(batchify(b, 2).status(), absl::StatusCode::kInvalidArgument, {"batchify", "rank 1"});
}

TEST(LmTextTest, RandomBpttLengthFollowsMlbenchRule) {
  Generator g1(42), g2(42);
  std::vector<int64_t> lengths;
  for (int i = 0; i < 20000; ++i) {
    lengths.push_back(random_bptt_length(70, g1));
    ASSERT_EQ(lengths.back(), random_bptt_length(70, g2)) << "same seed, same lengths";
  }
  // Mixture: 95% around 70, 5% around 35, each with stddev 5 (truncated).
  int64_t near_half = 0;
  double sum = 0;
  for (int64_t l : lengths) {
    ASSERT_GE(l, 5);
    near_half += l < 52;
    sum += l;
  }
  const double half_fraction = static_cast<double>(near_half) / lengths.size();
  EXPECT_NEAR(half_fraction, 0.05, 0.01);
  // E[int(x)] = mean - ~0.5 for truncation of positive values.
  EXPECT_NEAR(sum / lengths.size(), 0.95 * 70 + 0.05 * 35 - 0.5, 0.3);
  Generator small(7);
  for (int i = 0; i < 1000; ++i) ASSERT_GE(random_bptt_length(4, small, 3), 3);
}

}  // namespace
}  // namespace ts::data
