#include "nn/embedding.h"

#include "base/error.h"
#include "tensor/ops.h"

namespace ts::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t dim, int64_t padding_idx)
    : Module("Embedding"), num_embeddings_(num_embeddings), dim_(dim), padding_idx_(padding_idx) {
  TS_CHECK(num_embeddings > 0 && dim > 0, "Embedding(num_embeddings=", num_embeddings, ", dim=", dim,
           "): sizes must be positive");
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
  return functional::embedding(ids, param("weight"), padding_idx_);
}

}  // namespace ts::nn
