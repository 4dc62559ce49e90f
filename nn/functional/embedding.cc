// embedding: a row lookup (index_select) whose backward scatter-adds the
// incoming rows into a dense weight gradient, skipping the padding row.
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/function.h"
#include "base/error.h"
#include "nn/functional.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts::nn::functional {

autograd::Variable embedding(const Tensor& ids, const autograd::Variable& weight, int64_t padding_idx) {
  TS_CHECK(weight.defined() && weight.dim() == 2, "embedding: weight must be 2-D [num_embeddings, dim], got ",
           weight.defined() ? weight.data().describe() : "undefined");
  TS_CHECK(ids.defined() && (ids.dtype() == DType::kI32 || ids.dtype() == DType::kI64),
           "embedding: indices must be i32 or i64, got ", ids.defined() ? ids.describe() : "undefined");
  check_same_device("embedding", {&ids, &weight.data()});
  const int64_t rows = weight.size(0), dim = weight.size(1);
  if (padding_idx != kNoPadding) {
    TS_CHECK(padding_idx >= -rows && padding_idx < rows, "embedding: padding_idx ", padding_idx,
             " is out of range for ", rows, " embeddings");
    if (padding_idx < 0) padding_idx += rows;
  }
  const Tensor flat = reshape(ids, {ids.numel()});
  Shape out_shape = ids.shape();
  out_shape.push_back(dim);
  // index_select checks the range (one read of the indices' min and max);
  // its error is given this op's name.
  Tensor selected;
  try {
    selected = index_select(weight.data(), 0, flat);
  } catch (const Error& e) {
    throw Error(e.code(), absl::StrCat("embedding: ", e.message()));
  }
  Tensor out = reshape(selected, out_shape);
  const Shape weight_shape = weight.shape();
  return autograd::record("embedding", {weight}, std::move(out),
                          [flat, padding_idx, weight_shape, dim](const autograd::GradContext& ctx) {
                            Tensor grad = reshape(ctx.grad(), {flat.numel(), dim});
                            if (padding_idx != kNoPadding)
                              grad = masked_fill(grad, eq(flat, Scalar(padding_idx)).unsqueeze(1), Scalar(0));
                            const Tensor index = flat.view({flat.numel(), 1}).expand(grad.shape());
                            const Tensor zero = zeros(weight_shape, {grad.dtype(), grad.device()});
                            return std::vector<Tensor>{scatter_add(zero, 0, index, grad)};
                          });
}

}  // namespace ts::nn::functional
