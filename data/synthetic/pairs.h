// A synthetic translation set with the real pipeline's form (bos ... eos
// token sequences, ids as BpeTokenizer: pad 0, bos 1, eos 2, unk 3): the
// target is the source's words reversed and passed through a fixed
// permutation of the vocabulary, a deterministic function a sequence model
// can learn. Generated in get() from (seed, i).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "data/dataset.h"

namespace ts::data {

struct SyntheticPairOptions {
  int64_t size = 100000;
  int64_t vocab_size = 32000;  // ids below 4 are the specials
  // Words per sentence, bos and eos not counted; uniform in [min, max].
  int64_t min_words = 3;
  int64_t max_words = 50;
  uint64_t seed = 0;
};

// get(i) gives {source i64 [n + 2], target i64 [n + 2]}: sentences of
// different lengths, so the loader collates them with padding
// (CollateOptions{.padded_fields = {0, 1}}).
class SyntheticSentencePairs : public Dataset {
 public:
  static constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kFirstWord = 4;

  static absl::StatusOr<std::unique_ptr<SyntheticSentencePairs>> create(SyntheticPairOptions options);

  int64_t size() const override { return options_.size; }
  absl::StatusOr<Example> get(int64_t index) const override;
  // The target word of source word `word` (a permutation of the word ids).
  int64_t translate(int64_t word) const;

 private:
  explicit SyntheticSentencePairs(SyntheticPairOptions options);
  SyntheticPairOptions options_;
  std::vector<int64_t> permutation_;  // over word ids minus kFirstWord
};

}  // namespace ts::data
