// Embedding: a table of num_embeddings vectors of `dim` floats, looked up by
// index (nn/functional.h's embedding), as torch.nn.Embedding: weight N(0, 1)
// with the padding row zeroed, and the padding row given no gradient.
#pragma once

#include <cstdint>

#include "nn/functional.h"
#include "nn/module.h"

namespace ts::nn {

class Embedding final : public Module {
 public:
  // weight [num_embeddings, dim]. padding_idx may count from the end
  // (negative); sizes must be positive.
  Embedding(int64_t num_embeddings, int64_t dim, int64_t padding_idx = functional::kNoPadding);
  // ids (i32 or i64, any shape) -> [ids..., dim].
  Variable forward(const Tensor& ids);

  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t dim() const { return dim_; }
  // The padding row counted from the start, or functional::kNoPadding.
  int64_t padding_idx() const { return padding_idx_; }

 private:
  int64_t num_embeddings_, dim_, padding_idx_;
};

}  // namespace ts::nn
