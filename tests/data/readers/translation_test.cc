#include "data/readers/translation.h"

#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/test_files.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::write_temp;
using ::ts::testing::expect_error;

TEST(ParallelTextTest, ReadsAlignedLinesAndRejectsMismatch) {
  const std::string en = write_temp("t.en", "Hello world\r\nOpen file\n\n");
  const std::string de = write_temp("t.de",
                                    "Hallo Welt\nDatei \xc3\xb6"
                                    "ffnen\n\n");
  ASSERT_OK_AND_ASSIGN(ParallelCorpus c, read_parallel(en, de));
  EXPECT_EQ(c.source, (std::vector<std::string>{"Hello world", "Open file", ""}));
  EXPECT_EQ(c.target, (std::vector<std::string>{"Hallo Welt",
                                                "Datei \xc3\xb6"
                                                "ffnen",
                                                ""}));

  const std::string short_de = write_temp("short.de", "Hallo Welt\n");
  expect_error(read_parallel(en, short_de).status(), absl::StatusCode::kInvalidArgument,
               {"not aligned", en, "3 lines", short_de, "has 1"});
  const std::string bad = write_temp("bad.de", "Hallo\nWelt \xc3\n\n");
  expect_error(read_parallel(en, bad).status(), absl::StatusCode::kInvalidArgument, {bad + ":2:6:", "invalid UTF-8"});
  const std::string empty = write_temp("empty.en", "");
  expect_error(read_parallel(empty, empty).status(), absl::StatusCode::kInvalidArgument, {"empty.en", "empty"});
  expect_error(read_parallel("/nonexistent/a.en", de).status(), absl::StatusCode::kNotFound, {"/nonexistent/a.en"});
}

// As MLBench's Python reads WMT files (universal newlines) and lm_text reads
// its own: a line ends at \n, \r\n or a lone \r.
TEST(ParallelTextTest, LinesEndAtALoneCarriageReturnToo) {
  EXPECT_EQ(split_lines("a\rb\n"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(split_lines("a\r\n\rb\r"), (std::vector<std::string>{"a", "", "b"}));
  ASSERT_OK_AND_ASSIGN(ParallelCorpus c, parse_parallel("a\rb\n", "cr.en", "A\r\nB", "cr.de"));
  EXPECT_EQ(c.source, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.target, (std::vector<std::string>{"A", "B"}));
}

// Sennrich et al.'s example: low x5, lower x2, newest x6, widest x3.
std::vector<std::string> sennrich_corpus() {
  std::vector<std::string> lines;
  for (auto [word, count] :
       {std::pair{"low", 5}, std::pair{"lower", 2}, std::pair{"newest", 6}, std::pair{"widest", 3}}) {
    for (int i = 0; i < count; ++i) lines.push_back(word);
  }
  return lines;
}

std::vector<std::string> pieces(const BpeTokenizer& tok, absl::string_view line) {
  const std::vector<int64_t> ids = tok.encode(line);
  EXPECT_EQ(ids.front(), BpeTokenizer::kBos);
  EXPECT_EQ(ids.back(), BpeTokenizer::kEos);
  std::vector<std::string> out;
  for (size_t i = 1; i + 1 < ids.size(); ++i) out.push_back(tok.token(ids[i]));
  return out;
}

TEST(BpeTest, LearnsTheMostFrequentPairsFirst) {
  const std::vector<std::string> lines = sennrich_corpus();
  // Merges with count >= 4, in order: e+s (9; ties with s+t</w>, broken by
  // smaller ids), es+t</w> (9), l+o (7), e+w (6), n+ew (6), new+est</w> (6),
  // lo+w</w> (5). Then the best pair has count 3 and learning stops.
  ASSERT_OK_AND_ASSIGN(BpeTokenizer tok, BpeTokenizer::learn({lines}, {.vocab_size = 1000, .min_frequency = 4}));
  EXPECT_EQ(tok.num_merges(), 7);
  EXPECT_EQ(pieces(tok, "newest"), (std::vector<std::string>{"newest</w>"}));
  EXPECT_EQ(pieces(tok, "low"), (std::vector<std::string>{"low</w>"}));
  EXPECT_EQ(pieces(tok, "widest"), (std::vector<std::string>{"w", "i", "d", "est</w>"}));
  EXPECT_EQ(pieces(tok, "lowest"), (std::vector<std::string>{"lo", "w", "est</w>"}));
  EXPECT_EQ(pieces(tok, "lower"), (std::vector<std::string>{"lo", "w", "e", "r</w>"}));
}

TEST(BpeTest, RoundTripsAndMapsUnseenCharactersToUnk) {
  const std::vector<std::string> en = {"the quick brown fox", "jumps over the lazy dog", "the end"};
  const std::vector<std::string> de = {"der schnelle braune Fuchs",
                                       "springt \xc3\xbc"
                                       "ber den faulen Hund"};
  ASSERT_OK_AND_ASSIGN(BpeTokenizer tok, BpeTokenizer::learn({en, de}, {.vocab_size = 120, .min_frequency = 1}));
  for (const auto* lines : {&en, &de}) {
    for (const std::string& line : *lines) EXPECT_EQ(tok.decode(tok.encode(line)), line);
  }
  // Unseen words of seen characters decode exactly; "Z" was never seen.
  EXPECT_EQ(tok.decode(tok.encode("  the   fox\tjumps ")), "the fox jumps");
  const std::vector<int64_t> ids = tok.encode("Zug");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), BpeTokenizer::kUnk), 1);
  EXPECT_EQ(tok.decode(ids), "<unk>ug");
  EXPECT_EQ(tok.encode(""), (std::vector<int64_t>{BpeTokenizer::kBos, BpeTokenizer::kEos}));
}

TEST(BpeTest, VocabularyCapMinFrequencyAndDeterminism) {
  std::vector<std::string> lines;
  for (int i = 0; i < 200; ++i) lines.push_back(absl::StrCat("word", i % 37, " token", i % 11, " x", i));
  ASSERT_OK_AND_ASSIGN(BpeTokenizer capped, BpeTokenizer::learn({lines}, {.vocab_size = 60, .min_frequency = 2}));
  EXPECT_EQ(capped.vocab_size(), 60);
  ASSERT_OK_AND_ASSIGN(BpeTokenizer again, BpeTokenizer::learn({lines}, {.vocab_size = 60, .min_frequency = 2}));
  for (const std::string& line : lines) EXPECT_EQ(capped.encode(line), again.encode(line));

  ASSERT_OK_AND_ASSIGN(BpeTokenizer full, BpeTokenizer::learn({lines}, {.vocab_size = 100000, .min_frequency = 2}));
  EXPECT_LT(full.vocab_size(), 100000);  // stopped by min_frequency
  // Every word seen at least twice becomes one token; "x123" (seen once) does not.
  EXPECT_EQ(full.encode("word5 token3").size(), 4u);
  EXPECT_GT(full.encode("x123").size(), 3u);

  expect_error(BpeTokenizer::learn({lines}, {.vocab_size = 4}).status(), absl::StatusCode::kInvalidArgument,
               {"vocab_size 4"});
  const std::vector<std::string> blank = {"", "  "};
  expect_error(BpeTokenizer::learn({blank}, {}).status(), absl::StatusCode::kInvalidArgument, {"no words"});
}

TEST(TranslationTest, LengthFilterCountsBosAndEos) {
  EncodedPairs pairs;
  pairs.source = {{1, 5, 2}, {1, 5, 5, 5, 2}, {1, 2}};
  pairs.target = {{1, 6, 6, 2}, {1, 2}, {1, 6, 6, 6, 6, 6, 2}};
  const EncodedPairs kept = filter_by_length(pairs, 4);
  ASSERT_EQ(kept.size(), 1);
  EXPECT_EQ(kept.source[0], (std::vector<int64_t>{1, 5, 2}));
  EXPECT_EQ(filter_by_length(pairs, 7).size(), 3);
}

class BucketTest : public ::ts::testing::SeededTest {};

TEST_F(BucketTest, BatchesCoverEveryPairOnceUnderTheTokenCap) {
  std::vector<int64_t> lengths(500);
  for (int64_t& l : lengths) l = 2 + rng()() % 60;
  lengths[17] = 500;  // longer than the cap: a batch of its own
  const int64_t max_tokens = 256;
  TokenBucketBatchSampler sampler(lengths, max_tokens, 1234);
  const auto epoch0 = sampler.batches(0);
  std::vector<int> seen(lengths.size(), 0);
  for (const auto& batch : epoch0) {
    ASSERT_FALSE(batch.empty());
    int64_t longest = 0, shortest = 1 << 30;
    for (int64_t i : batch) {
      ++seen[i];
      longest = std::max(longest, lengths[i]);
      shortest = std::min(shortest, lengths[i]);
    }
    if (batch.size() > 1) {
      EXPECT_LE(static_cast<int64_t>(batch.size()) * longest, max_tokens);
    }
    // Sorted by length before cutting: a batch spans a narrow length range.
    EXPECT_LE(longest - shortest, 12);
  }
  for (int s : seen) ASSERT_EQ(s, 1);
  EXPECT_EQ(sampler.batches(0), epoch0) << "same seed and epoch, same batches";
  EXPECT_NE(sampler.batches(1), epoch0) << "a new epoch reshuffles";
  EXPECT_NE(TokenBucketBatchSampler(lengths, max_tokens, 99).batches(0), epoch0);
}

TEST(TranslationTest, EncodeFilterBatchAndCollate) {
  ParallelCorpus corpus{{"a b", "a", "b b b"}, {"x", "x y", "y"}};
  std::vector<std::string> all = corpus.source;
  all.insert(all.end(), corpus.target.begin(), corpus.target.end());
  ASSERT_OK_AND_ASSIGN(BpeTokenizer tok, BpeTokenizer::learn({all}, {.vocab_size = 100, .min_frequency = 1}));
  const EncodedPairs pairs = encode_pairs(corpus, tok);
  ASSERT_EQ(pairs.size(), 3);
  EXPECT_EQ(pairs.source[2].size(), 5u);
  const auto sampler = TokenBucketBatchSampler::for_pairs(pairs, 8, 1);
  size_t covered = 0;
  for (const auto& batch : sampler.batches(0)) covered += batch.size();
  EXPECT_EQ(covered, 3u);

  ASSERT_OK_AND_ASSIGN(TranslationBatch batch, collate_pairs(pairs, {2, 0}));
  EXPECT_EQ(batch.source.shape(), Shape({2, 5}));
  const auto src = to_vector<int64_t>(batch.source);
  EXPECT_EQ(std::vector<int64_t>(src.begin(), src.begin() + 5), pairs.source[2]);
  EXPECT_EQ(std::vector<int64_t>(src.begin() + 5, src.begin() + 9), pairs.source[0]);
  EXPECT_EQ(src[9], BpeTokenizer::kPad);
  const auto src_len = to_vector<int64_t>(batch.source_lengths);
  EXPECT_EQ(src_len, (std::vector<int64_t>{5, 4}));
  const auto tgt_len = to_vector<int64_t>(batch.target_lengths);
  EXPECT_EQ(tgt_len, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(batch.target.shape(), Shape({2, 3}));
  expect_error(collate_pairs(pairs, {3}).status(), absl::StatusCode::kOutOfRange, {"collate_pairs", "index 3"});
  expect_error(collate_pairs(pairs, {}).status(), absl::StatusCode::kInvalidArgument, {"collate_pairs"});
}

}  // namespace
}  // namespace ts::data
