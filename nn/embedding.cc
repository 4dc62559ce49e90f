#include "nn/embedding.h"

#include "autograd/ops.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t dim, EmbeddingOptions options)
    : Module("Embedding"),
      num_embeddings_(num_embeddings),
      dim_(dim),
      padding_idx_(options.padding_idx),
      word_dropout_(options.word_dropout) {
  TS_CHECK(num_embeddings > 0 && dim > 0, "Embedding(num_embeddings=", num_embeddings, ", dim=", dim,
           "): sizes must be positive");
  TS_CHECK(word_dropout_ >= 0 && word_dropout_ < 1, "Embedding(num_embeddings=", num_embeddings, ", dim=", dim,
           "): word_dropout ", word_dropout_, " must be in [0, 1)");
  const int64_t padding_idx = options.padding_idx;
  if (padding_idx != functional::kNoPadding) {
    TS_CHECK(padding_idx >= -num_embeddings && padding_idx < num_embeddings,
             "Embedding(num_embeddings=", num_embeddings, ", dim=", dim, "): padding_idx ", padding_idx,
             " is out of range");
    if (padding_idx_ < 0) padding_idx_ += num_embeddings;
  }
  Tensor weight = randn({num_embeddings, dim});
  if (padding_idx_ != functional::kNoPadding) fill_(weight.select(0, padding_idx_), Scalar(0));
  register_parameter("weight", std::move(weight));
}

Variable Embedding::forward(const Tensor& ids) {
  // The weight is read by name on each call: set_parameter may have replaced it.
  Variable weight = param("weight");
  if (is_training() && word_dropout_ > 0) {
    // One keep-or-drop draw per row, broadcast along it; the gradient flows
    // through the same multiply.
    const Tensor row_mask = bernoulli({num_embeddings_, 1}, 1 - word_dropout_, {weight.dtype(), weight.device()}) *
                            (1 / (1 - word_dropout_));
    weight = weight * Variable(row_mask);
  }
  return functional::embedding(ids, weight, padding_idx_);
}

}  // namespace ts::nn
