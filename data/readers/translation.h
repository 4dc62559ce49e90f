// Translation batches: sentence pairs encoded by a tokenizer, MLBench GNMT's
// length filters, and length-bucketed batches capped by token count.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "data/readers/bpe.h"
#include "data/readers/parallel_text.h"
#include "tensor/tensor.h"

namespace ts::data {

// MLBench GNMT's limits, in tokens counting bos and eos (as MLPerf's GNMT
// counts them: its tokenizer adds both before filtering).
inline constexpr int64_t kGnmtMaxTrainLength = 75;
inline constexpr int64_t kGnmtMaxTestLength = 150;

struct EncodedPairs {
  std::vector<std::vector<int64_t>> source, target;  // each bos ... eos
  int64_t size() const { return static_cast<int64_t>(source.size()); }
};

EncodedPairs encode_pairs(const ParallelCorpus& corpus, const BpeTokenizer& tokenizer);

// The pairs whose source and target both have at most max_length tokens.
EncodedPairs filter_by_length(EncodedPairs pairs, int64_t max_length);

// Batches of similar lengths: a batch holds at most max_tokens tokens once
// padded (count x longest side of its longest pair); a pair longer than
// max_tokens alone forms its own batch. Each epoch, pairs of equal length are
// shuffled, sorted by length, cut into batches, and the batches shuffled, all
// from (seed, epoch), so every rank computes the same batches.
class TokenBucketBatchSampler {
 public:
  // lengths[i]: the padded cost of pair i (max of its source and target).
  TokenBucketBatchSampler(std::vector<int64_t> lengths, int64_t max_tokens, uint64_t seed);
  static TokenBucketBatchSampler for_pairs(const EncodedPairs& pairs, int64_t max_tokens, uint64_t seed);

  std::vector<std::vector<int64_t>> batches(int64_t epoch) const;

 private:
  std::vector<int64_t> lengths_;
  int64_t max_tokens_;
  uint64_t seed_;
};

// i64 [batch, longest] tensors padded with BpeTokenizer::kPad, and i64
// [batch] lengths, for the pairs at `indices`.
struct TranslationBatch {
  Tensor source, target;
  Tensor source_lengths, target_lengths;
};
absl::StatusOr<TranslationBatch> collate_pairs(const EncodedPairs& pairs, absl::Span<const int64_t> indices);

}  // namespace ts::data
