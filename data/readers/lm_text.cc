#include "data/readers/lm_text.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/readers/file_io.h"
#include "data/readers/lines.h"
#include "data/readers/utf8.h"
#include "tensor/ops.h"
#include "tensor/philox.h"

namespace ts::data {
namespace {

// The bytes of the whitespace character at text[p] within a line, 0 if it
// is none: what Python's str.split() splits on (str.isspace), in UTF-8.
size_t space_bytes(absl::string_view text, size_t p) {
  const auto byte = [&](size_t k) { return p + k < text.size() ? static_cast<unsigned char>(text[p + k]) : 0; };
  const unsigned char c = byte(0);
  if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) return 1;
  if (c == 0xC2 && (byte(1) == 0x85 || byte(1) == 0xA0)) return 2;  // U+0085, U+00A0
  if (c == 0xE1 && byte(1) == 0x9A && byte(2) == 0x80) return 3;    // U+1680
  if (c == 0xE2 && byte(1) == 0x80) {                               // U+2000-200A, U+2028, U+2029, U+202F
    const unsigned char d = byte(2);
    return (d >= 0x80 && d <= 0x8A) || d == 0xA8 || d == 0xA9 || d == 0xAF ? 3 : 0;
  }
  if (c == 0xE2 && byte(1) == 0x81 && byte(2) == 0x9F) return 3;  // U+205F
  if (c == 0xE3 && byte(1) == 0x80 && byte(2) == 0x80) return 3;  // U+3000
  return 0;
}

// Calls word(token) for each token and eos() at the end of each line, as
// awd-lstm-lm's `for line in open(path): line.split() + ['<eos>']` reads a
// file: lines end at \n, \r\n or \r (Python's universal newlines), tokens
// are split on any whitespace.
template <typename Word, typename Eos>
void for_each_token(absl::string_view text, Word word, Eos eos) {
  for_each_line(text, [&](absl::string_view line) {
    size_t p = 0;
    while (p < line.size()) {
      while (p < line.size() && space_bytes(line, p) > 0) p += space_bytes(line, p);
      const size_t start = p;
      while (p < line.size() && space_bytes(line, p) == 0) ++p;
      if (p > start) word(line.substr(start, p - start));
    }
    eos();
  });
}

absl::StatusOr<Tensor> token_stream(const LmSplitText& split, const Vocabulary& vocab) {
  ASSIGN_OR_RETURN(const std::vector<int64_t> ids, tokenize_lm(split.text, split.name, vocab));
  return from_vector<int64_t>(ids, {static_cast<int64_t>(ids.size())});
}

}  // namespace

absl::StatusOr<Vocabulary> build_lm_vocabulary(absl::string_view train_text, absl::string_view name,
                                               int64_t min_count) {
  if (min_count < 1) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": vocabulary min_count ", min_count, " must be >= 1"));
  }
  RETURN_IF_ERROR(check_utf8(train_text, name));
  absl::flat_hash_map<absl::string_view, int64_t> counts;
  if (min_count > 1) {
    for_each_token(
        train_text, [&](absl::string_view word) { ++counts[word]; }, [] {});
  }
  Vocabulary vocab(/*unknown=*/0);
  vocab.add(kLmUnk);
  vocab.add(kLmEos);
  for_each_token(
      train_text,
      [&](absl::string_view word) {
        if (min_count == 1 || counts[word] >= min_count) vocab.add(word);
      },
      [] {});
  return vocab;
}

absl::StatusOr<std::vector<int64_t>> tokenize_lm(absl::string_view text, absl::string_view name,
                                                 const Vocabulary& vocab) {
  RETURN_IF_ERROR(check_utf8(text, name));
  if (vocab.id(kLmEos) != 1 || vocab.unknown() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": tokenize_lm needs a vocabulary from build_lm_vocabulary (<unk> = 0, <eos> = 1)"));
  }
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 5);
  for_each_token(
      text, [&](absl::string_view word) { ids.push_back(vocab.id(word)); }, [&] { ids.push_back(1); });
  return ids;
}

absl::StatusOr<LmCorpus> make_lm_corpus(const LmSplitText& train, const LmSplitText& valid, const LmSplitText& test,
                                        int64_t min_count) {
  if (train.text.empty()) return absl::InvalidArgumentError(absl::StrCat(train.name, ": empty train split"));
  LmCorpus corpus;
  ASSIGN_OR_RETURN(corpus.vocab, build_lm_vocabulary(train.text, train.name, min_count));
  ASSIGN_OR_RETURN(corpus.train, token_stream(train, corpus.vocab));
  ASSIGN_OR_RETURN(corpus.valid, token_stream(valid, corpus.vocab));
  ASSIGN_OR_RETURN(corpus.test, token_stream(test, corpus.vocab));
  return corpus;
}

absl::StatusOr<LmCorpus> load_lm_corpus(const std::string& train_path, const std::string& valid_path,
                                        const std::string& test_path, int64_t min_count) {
  LmSplitText splits[3] = {{train_path, ""}, {valid_path, ""}, {test_path, ""}};
  for (LmSplitText& split : splits) {
    ASSIGN_OR_RETURN(split.text, read_inflated(split.name));
  }
  return make_lm_corpus(splits[0], splits[1], splits[2], min_count);
}

absl::StatusOr<LmCorpus> load_wikitext(const std::string& dir) {
  return load_lm_corpus(dir + "/wiki.train.tokens", dir + "/wiki.valid.tokens", dir + "/wiki.test.tokens");
}

absl::StatusOr<Tensor> batchify(const Tensor& stream, int64_t batch) {
  if (stream.dim() != 1 || stream.dtype() != DType::kI64) {
    return absl::InvalidArgumentError(
        absl::StrCat("batchify: expected an i64 token stream of rank 1, got ", stream.describe()));
  }
  if (batch < 1 || stream.numel() < batch) {
    return absl::InvalidArgumentError(
        absl::StrCat("batchify: batch ", batch, " must be in [1, ", stream.numel(), "] (the stream's length)"));
  }
  const int64_t n = stream.numel() / batch;
  return contiguous(reshape(stream.narrow(0, 0, batch * n), {batch, n}));
}

absl::StatusOr<BpttWindow> bptt_window(const Tensor& batched, int64_t start, int64_t seq_len) {
  if (batched.dim() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("bptt_window: expected a [batch, n] tensor from batchify, got ", batched.describe()));
  }
  const int64_t n = batched.size(1);
  if (start < 0 || start + 1 >= n || seq_len < 1) {
    return absl::OutOfRangeError(absl::StrCat("bptt_window: start ", start, " with seq_len ", seq_len,
                                              " leaves no window in ", n, " columns (start must be < n - 1)"));
  }
  const int64_t len = std::min(seq_len, n - 1 - start);
  return BpttWindow{batched.narrow(1, start, len), batched.narrow(1, start + 1, len)};
}

int64_t random_bptt_length(int64_t bptt, Generator& generator, int64_t min_len) {
  const PhiloxKey key = generator.reserve(2);
  double u[2], z[2];
  uniform2_f64(philox_group(key, 0), u);
  normal2_f64(philox_group(key, 1), z);
  const double base = u[0] < 0.95 ? static_cast<double>(bptt) : bptt / 2.0;
  // Python's int() truncates toward zero.
  return std::max<int64_t>(min_len, static_cast<int64_t>(std::trunc(base + 5.0 * z[0])));
}

}  // namespace ts::data
