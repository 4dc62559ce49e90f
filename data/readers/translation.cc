#include "data/readers/translation.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "data/loader/random_stream.h"
#include "tensor/ops.h"
#include "tensor/philox.h"

namespace ts::data {
namespace {

// Fisher-Yates driven by Philox under the seed's token-bucket key for
// `stream`: the same order on every machine and standard library
// (std::shuffle's is implementation-defined).
void philox_shuffle(std::vector<int64_t>& v, uint64_t seed, uint64_t stream) {
  const PhiloxKey key{RandomStream::key_for(seed, SeedUse::kTokenBuckets, stream), 0};
  for (size_t i = v.size(); i > 1; --i) {
    const Philox4 w = philox_group(key, i);
    const uint64_t r = (static_cast<uint64_t>(w.v[0]) << 32) | w.v[1];
    // Multiply-shift maps r onto [0, i) with negligible bias for i << 2^64.
    const size_t j = static_cast<size_t>((static_cast<unsigned __int128>(r) * i) >> 64);
    std::swap(v[i - 1], v[j]);
  }
}

Tensor pad_rows(const std::vector<std::vector<int64_t>>& rows, absl::Span<const int64_t> indices, Tensor& lengths) {
  const int64_t n = indices.size();
  int64_t longest = 0;
  std::vector<int64_t> lens(n);
  for (int64_t i = 0; i < n; ++i) {
    lens[i] = rows[indices[i]].size();
    longest = std::max(longest, lens[i]);
  }
  std::vector<int64_t> padded(n * longest, BpeTokenizer::kPad);
  for (int64_t i = 0; i < n; ++i) std::copy(rows[indices[i]].begin(), rows[indices[i]].end(), &padded[i * longest]);
  lengths = from_vector<int64_t>(lens, {n});
  return from_vector<int64_t>(padded, {n, longest});
}

}  // namespace

EncodedPairs encode_pairs(const ParallelCorpus& corpus, const BpeTokenizer& tokenizer) {
  EncodedPairs pairs;
  pairs.source.reserve(corpus.source.size());
  pairs.target.reserve(corpus.target.size());
  for (size_t i = 0; i < corpus.source.size(); ++i) {
    pairs.source.push_back(tokenizer.encode(corpus.source[i]));
    pairs.target.push_back(tokenizer.encode(corpus.target[i]));
  }
  return pairs;
}

EncodedPairs filter_by_length(EncodedPairs pairs, int64_t max_length) {
  EncodedPairs kept;
  for (int64_t i = 0; i < pairs.size(); ++i) {
    if (static_cast<int64_t>(pairs.source[i].size()) <= max_length &&
        static_cast<int64_t>(pairs.target[i].size()) <= max_length) {
      kept.source.push_back(std::move(pairs.source[i]));
      kept.target.push_back(std::move(pairs.target[i]));
    }
  }
  return kept;
}

TokenBucketBatchSampler::TokenBucketBatchSampler(std::vector<int64_t> lengths, int64_t max_tokens, uint64_t seed)
    : lengths_(std::move(lengths)), max_tokens_(max_tokens), seed_(seed) {}

TokenBucketBatchSampler TokenBucketBatchSampler::for_pairs(const EncodedPairs& pairs, int64_t max_tokens,
                                                           uint64_t seed) {
  std::vector<int64_t> lengths(pairs.size());
  for (int64_t i = 0; i < pairs.size(); ++i) {
    lengths[i] = std::max(pairs.source[i].size(), pairs.target[i].size());
  }
  return TokenBucketBatchSampler(std::move(lengths), max_tokens, seed);
}

std::vector<std::vector<int64_t>> TokenBucketBatchSampler::batches(int64_t epoch) const {
  std::vector<int64_t> order(lengths_.size());
  std::iota(order.begin(), order.end(), 0);
  philox_shuffle(order, seed_, 2 * static_cast<uint64_t>(epoch));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lengths_[a] < lengths_[b]; });
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> current;
  for (int64_t i : order) {
    // Sorted ascending, so pair i is the longest of the batch it joins.
    if (!current.empty() && static_cast<int64_t>(current.size() + 1) * lengths_[i] > max_tokens_) {
      batches.push_back(std::move(current));
      current.clear();
    }
    current.push_back(i);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  std::vector<int64_t> batch_order(batches.size());
  std::iota(batch_order.begin(), batch_order.end(), 0);
  philox_shuffle(batch_order, seed_, 2 * static_cast<uint64_t>(epoch) + 1);
  std::vector<std::vector<int64_t>> shuffled;
  shuffled.reserve(batches.size());
  for (int64_t b : batch_order) shuffled.push_back(std::move(batches[b]));
  return shuffled;
}

absl::StatusOr<TranslationBatch> collate_pairs(const EncodedPairs& pairs, absl::Span<const int64_t> indices) {
  if (indices.empty()) return absl::InvalidArgumentError("collate_pairs: no indices");
  for (int64_t i : indices) {
    if (i < 0 || i >= pairs.size()) {
      return absl::OutOfRangeError(absl::StrCat("collate_pairs: index ", i, " outside [0, ", pairs.size(), ")"));
    }
  }
  TranslationBatch batch;
  batch.source = pad_rows(pairs.source, indices, batch.source_lengths);
  batch.target = pad_rows(pairs.target, indices, batch.target_lengths);
  return batch;
}

}  // namespace ts::data
