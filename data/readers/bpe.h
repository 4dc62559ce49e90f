// Byte-pair-encoding subword tokenizer (Sennrich et al. 2016, as subword-nmt):
// merges learned on a train split, words split on whitespace, an end-of-word
// marker on each word's last symbol, and the special ids pad/bos/eos/unk.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "data/readers/vocabulary.h"

namespace ts::data {

struct BpeOptions {
  // Total ids: the 4 specials, the train split's characters and one per merge.
  int64_t vocab_size = 32000;
  // Pairs seen fewer times than this in the train split are never merged.
  int64_t min_frequency = 2;
};

class BpeTokenizer {
 public:
  static constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kUnk = 3;

  // Learns on every line of every corpus (pass source and target lines for a
  // joint vocabulary, as GNMT uses). Deterministic: ties between equally
  // frequent pairs go to the pair of smaller symbol ids.
  static absl::StatusOr<BpeTokenizer> learn(const std::vector<absl::Span<const std::string>>& corpora,
                                            const BpeOptions& options);

  // bos, the subword ids of each word, eos. Characters never seen in the
  // train split become unk (each seen character has a mid-word and a
  // word-final symbol, so a seen one is never unk).
  std::vector<int64_t> encode(absl::string_view line) const;
  // The text of ids (specials other than unk dropped, unk as "<unk>"), words
  // separated by one space.
  std::string decode(absl::Span<const int64_t> ids) const;

  int64_t vocab_size() const { return kNumSpecial + symbols_.size(); }
  int64_t num_merges() const { return static_cast<int64_t>(merges_.size()); }
  // The text of a subword id, "</w>" marking a word's end (for inspection).
  std::string token(int64_t id) const;

 private:
  static constexpr int64_t kNumSpecial = 4;
  // Symbols are interned as their text, plus kWordEnd when they end a word: a
  // byte that valid UTF-8 never holds, so no text can forge the marker.
  static constexpr char kWordEnd = '\xff';

  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  // The word's symbols after all merges; -1 marks a character not in the
  // vocabulary.
  std::vector<int32_t> segment(absl::string_view word) const;

  Vocabulary symbols_;
  struct Merge {
    uint64_t pair;
    int32_t result;
  };
  std::vector<Merge> merges_;                          // in the order learned
  absl::flat_hash_map<uint64_t, int32_t> merge_rank_;  // pair -> index in merges_
};

}  // namespace ts::data
