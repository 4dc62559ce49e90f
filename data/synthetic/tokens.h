// A synthetic language-model corpus: a token stream from a random Markov
// chain of low entropy (each token has a few likely successors), so a model
// can predict it far better than chance. The stream has the real corpora's
// form (i64 [tokens], as data/readers/lm_text.h loads) and is also a Dataset
// of consecutive (input, target) windows, generated in get().
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "data/dataset.h"
#include "tensor/tensor.h"

namespace ts::data {

struct SyntheticTokenOptions {
  int64_t vocab_size = 33278;  // WikiText-2's
  int64_t num_windows = 2000;  // the Dataset's size
  int64_t seq_len = 35;        // window length (bptt)
  // Successors per token; successor k has probability 2^-(k+1), the last
  // one the remainder (entropy under 2 bits per token).
  int64_t branching = 4;
  uint64_t seed = 0;
};

// get(i) gives {input i64 [seq_len], target i64 [seq_len]} with input =
// stream[i * seq_len, (i+1) * seq_len) and target the same shifted by one.
class SyntheticTokenStream : public Dataset {
 public:
  static absl::StatusOr<std::unique_ptr<SyntheticTokenStream>> create(SyntheticTokenOptions options);

  int64_t size() const override { return options_.num_windows; }
  absl::StatusOr<Example> get(int64_t index) const override;
  // Tokens [start, start + count) of the stream, as i64 [count].
  absl::StatusOr<Tensor> tokens(int64_t start, int64_t count) const;
  // The k-th successor of `token` (k < branching): the chain's transition
  // table, derived from the seed.
  int64_t successor(int64_t token, int64_t k) const;

 private:
  // The chain restarts from a seeded token every kChunk positions, so any
  // window is generated from at most one chunk's prefix.
  static constexpr int64_t kChunk = 1024;
  explicit SyntheticTokenStream(SyntheticTokenOptions options) : options_(options) {}
  SyntheticTokenOptions options_;
};

}  // namespace ts::data
