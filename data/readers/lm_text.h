// Language-model text (WikiText-2 style): whitespace tokens, one <eos> per
// line, a vocabulary built on the train split, the corpus as one i64 token
// stream batched into [batch, n] rows and read in bptt windows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/readers/vocabulary.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ts::data {

inline constexpr char kLmUnk[] = "<unk>";  // id 0
inline constexpr char kLmEos[] = "<eos>";  // id 1

// Tokens are runs of non-whitespace as Python's str.split() sees it (ASCII
// space, \t, \v, \f, \x1c-\x1f and Unicode's spaces such as U+00A0); each
// line (ending at \n, \r\n or \r, Python's universal newlines), empty lines
// included, ends with <eos>: as awd-lstm-lm and PyTorch's
// word_language_model read their files.
// Text must be valid UTF-8: an error names `name`, the line and column.
//
// <unk> and <eos> first, then the train split's words in order of first use,
// leaving out those seen fewer than min_count (>= 1) times: they become <unk>
// (WikiText's own files did this with 3 before they were published, so 1
// reads them as they are).
absl::StatusOr<Vocabulary> build_lm_vocabulary(absl::string_view train_text, absl::string_view name,
                                               int64_t min_count = 1);
// Token ids; words missing from `vocab` become <unk>.
absl::StatusOr<std::vector<int64_t>> tokenize_lm(absl::string_view text, absl::string_view name,
                                                 const Vocabulary& vocab);

struct LmCorpus {
  Vocabulary vocab;
  Tensor train, valid, test;  // i64 [tokens]
};

// One split's text and the name its errors give (its file).
struct LmSplitText {
  std::string name;
  std::string text;
};
// The corpus from the three splits' texts; the vocabulary from train.
absl::StatusOr<LmCorpus> make_lm_corpus(const LmSplitText& train, const LmSplitText& valid, const LmSplitText& test,
                                        int64_t min_count = 1);
// The three splits from files (plain or gzip'd).
absl::StatusOr<LmCorpus> load_lm_corpus(const std::string& train_path, const std::string& valid_path,
                                        const std::string& test_path, int64_t min_count = 1);
// WikiText-2's file names in `dir`: wiki.{train,valid,test}.tokens.
absl::StatusOr<LmCorpus> load_wikitext(const std::string& dir);

// The stream as [batch, n], row b holding tokens [b*n, (b+1)*n): each row is
// one contiguous part of the text. The last stream.numel() % batch tokens are
// dropped.
absl::StatusOr<Tensor> batchify(const Tensor& stream, int64_t batch);

// input = batched[:, start : start+len], target = batched[:, start+1 : start+1+len],
// with len = min(seq_len, n - 1 - start): views of `batched`.
struct BpttWindow {
  Tensor input, target;  // i64 [batch, len]
};
absl::StatusOr<BpttWindow> bptt_window(const Tensor& batched, int64_t start, int64_t seq_len);

// MLBench's (and AWD-LSTM's) random window length: base = bptt with
// probability 0.95, else bptt / 2; length = max(min_len, int(normal(base, 5))).
// Two Philox groups of `generator` per call, so a seed replays the sequence.
int64_t random_bptt_length(int64_t bptt, Generator& generator, int64_t min_len = 5);

}  // namespace ts::data
