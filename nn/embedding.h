// Embedding: a table of num_embeddings vectors of `dim` floats, looked up by
// index (nn/functional.h's embedding), as torch.nn.Embedding: weight N(0, 1)
// with the padding row zeroed, and the padding row given no gradient. With
// word_dropout (AWD-LSTM's embedding dropout), training drops whole rows of
// the table, each with that probability, and scales the kept ones by
// 1 / (1 - p): a dropped word is zero wherever it occurs in the batch.
#pragma once

#include <cstdint>

#include "nn/functional.h"
#include "nn/module.h"

namespace ts::nn {

struct EmbeddingOptions {
  int64_t padding_idx = functional::kNoPadding;  // may count from the end (negative)
  double word_dropout = 0;                       // in [0, 1), training only
};

class Embedding final : public Module {
 public:
  // weight [num_embeddings, dim]; sizes must be positive.
  Embedding(int64_t num_embeddings, int64_t dim, EmbeddingOptions options = {});
  // ids (i32 or i64, any shape) -> [ids..., dim].
  Variable forward(const Tensor& ids);

  // [num_embeddings, dim]; a decoder tied to the embedding shares it.
  const Variable& weight() const { return param("weight"); }
  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t dim() const { return dim_; }
  // The padding row counted from the start, or functional::kNoPadding.
  int64_t padding_idx() const { return padding_idx_; }
  double word_dropout() const { return word_dropout_; }

 private:
  int64_t num_embeddings_, dim_, padding_idx_;
  double word_dropout_;
};

}  // namespace ts::nn
