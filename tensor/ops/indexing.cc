// Joining (cat, stack) and index-driven ops (index_select, gather,
// scatter_add, one_hot).
#include "absl/strings/str_cat.h"
#include "tensor/backend.h"
#include "tensor/ops.h"
#include "tensor/ops/checks.h"
#include "tensor/status_macros.h"

namespace ts {

using ops_internal::as_index;
using ops_internal::check_index_range;
using ops_internal::check_same_device;

absl::StatusOr<Tensor> cat(absl::Span<const Tensor> tensors, int64_t dim) {
  if (tensors.empty()) return absl::InvalidArgumentError("cat: no tensors");
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : tensors) ptrs.push_back(&t);
  RETURN_IF_ERROR(check_same_device("cat", ptrs));
  const Tensor& first = tensors[0];
  if (first.dim() == 0) return absl::InvalidArgumentError("cat: cannot concatenate 0-dim tensors");
  ASSIGN_OR_RETURN(int64_t d, normalize_dim("cat", dim, first.dim()));
  DType dtype = first.dtype();
  Shape shape = first.shape();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    bool matches = t.dim() == first.dim();
    for (int64_t j = 0; matches && j < t.dim(); ++j) matches = j == d || t.shape()[j] == first.shape()[j];
    if (!matches) {
      return absl::InvalidArgumentError(absl::StrCat("cat: tensor ", i, " ", t.describe(),
                                                     " does not match ", first.describe(),
                                                     " outside dim ", dim));
    }
    shape[d] += t.shape()[d];
    dtype = promote_types(dtype, t.dtype());
  }
  std::vector<Tensor> inputs;
  for (const Tensor& t : tensors) {
    ASSIGN_OR_RETURN(Tensor converted, to(t, dtype));
    ASSIGN_OR_RETURN(Tensor dense, contiguous(converted));
    inputs.push_back(dense);
  }
  ASSIGN_OR_RETURN(Tensor out, empty(shape, {dtype, first.device()}));
  if (out.numel() > 0) RETURN_IF_ERROR(backend_for(out.device()).cat(inputs, d, out));
  return out;
}

absl::StatusOr<Tensor> stack(absl::Span<const Tensor> tensors, int64_t dim) {
  if (tensors.empty()) return absl::InvalidArgumentError("stack: no tensors");
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < tensors.size(); ++i) {
    RETURN_IF_ERROR(ops_internal::check_defined("stack", tensors[i]));
    if (tensors[i].shape() != tensors[0].shape()) {
      return absl::InvalidArgumentError(absl::StrCat("stack: tensor ", i, " ", tensors[i].describe(),
                                                     " differs in shape from ", tensors[0].describe()));
    }
    ASSIGN_OR_RETURN(Tensor u, tensors[i].unsqueeze(dim));
    expanded.push_back(u);
  }
  return cat(expanded, dim);
}

absl::StatusOr<Tensor> index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  RETURN_IF_ERROR(check_same_device("index_select", {&x, &index}));
  if (index.dim() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("index_select: index must be 1-D, got ", index.describe()));
  }
  ASSIGN_OR_RETURN(int64_t d, normalize_dim("index_select", dim, x.dim()));
  ASSIGN_OR_RETURN(Tensor idx, as_index("index_select", index));
  const Tensor x_view = x.dim() == 0 ? *x.unsqueeze(0) : x;
  RETURN_IF_ERROR(check_index_range("index_select", idx, x_view.shape()[d], d));
  ASSIGN_OR_RETURN(Tensor input, contiguous(x_view));
  Shape shape = input.shape();
  shape[d] = idx.numel();
  ASSIGN_OR_RETURN(Tensor out, empty(shape, {x.dtype(), x.device()}));
  if (out.numel() > 0) RETURN_IF_ERROR(backend_for(x.device()).index_select(input, d, idx, out));
  if (x.dim() == 0) return out.view(index.shape());
  return out;
}

namespace {

// gather/scatter shape rule: same number of dims, and index no larger than
// `other` in any dim except (when skip_dim) the indexed one.
absl::Status check_index_shape(absl::string_view op, const Tensor& index, const Tensor& other,
                               int64_t dim, bool skip_dim, absl::string_view other_name) {
  bool ok = index.dim() == other.dim();
  for (int64_t d = 0; ok && d < index.dim(); ++d) {
    if (skip_dim && d == dim) continue;
    ok = index.shape()[d] <= other.shape()[d];
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": index ", index.describe(), " does not fit ",
                                                   other_name, " ", other.describe(), " (dim ", dim, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> gather(const Tensor& x, int64_t dim, const Tensor& index) {
  RETURN_IF_ERROR(check_same_device("gather", {&x, &index}));
  ASSIGN_OR_RETURN(int64_t d, normalize_dim("gather", dim, x.dim()));
  RETURN_IF_ERROR(check_index_shape("gather", index, x, d, true, "input"));
  ASSIGN_OR_RETURN(Tensor idx, as_index("gather", index));
  RETURN_IF_ERROR(check_index_range("gather", idx, x.dim() == 0 ? 1 : x.shape()[d], d));
  ASSIGN_OR_RETURN(Tensor input, contiguous(x));
  ASSIGN_OR_RETURN(Tensor out, empty(index.shape(), {x.dtype(), x.device()}));
  if (out.numel() > 0) RETURN_IF_ERROR(backend_for(x.device()).gather(input, d, idx, out));
  return out;
}

absl::StatusOr<Tensor> scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  RETURN_IF_ERROR(check_same_device("scatter_add", {&x, &index, &src}));
  ASSIGN_OR_RETURN(int64_t d, normalize_dim("scatter_add", dim, x.dim()));
  RETURN_IF_ERROR(check_index_shape("scatter_add", index, x, d, true, "input"));
  RETURN_IF_ERROR(check_index_shape("scatter_add", index, src, d, false, "src"));
  if (src.dtype() != x.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("scatter_add: src ", src.describe(),
                                                   " and input ", x.describe(), " differ in dtype"));
  }
  if (x.dtype() == DType::kBool) return absl::InvalidArgumentError("scatter_add: not supported for bool tensors");
  ASSIGN_OR_RETURN(Tensor idx, as_index("scatter_add", index));
  RETURN_IF_ERROR(check_index_range("scatter_add", idx, x.dim() == 0 ? 1 : x.shape()[d], d));
  // Only the part of src that index covers takes part.
  Tensor src_part = src;
  for (int64_t j = 0; j < index.dim(); ++j) {
    ASSIGN_OR_RETURN(src_part, src_part.narrow(j, 0, index.shape()[j]));
  }
  ASSIGN_OR_RETURN(Tensor values, contiguous(src_part));
  ASSIGN_OR_RETURN(Tensor out, clone(x));
  if (idx.numel() > 0) RETURN_IF_ERROR(backend_for(x.device()).scatter_add(out, d, idx, values));
  return out;
}

absl::StatusOr<Tensor> one_hot(const Tensor& index, int64_t num_classes) {
  ASSIGN_OR_RETURN(Tensor idx, as_index("one_hot", index));
  if (num_classes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("one_hot: num_classes must be positive, got ", num_classes));
  }
  RETURN_IF_ERROR(check_index_range("one_hot", idx, num_classes, idx.dim()));
  ASSIGN_OR_RETURN(Tensor classes, arange(0, static_cast<double>(num_classes), 1, {DType::kI64, idx.device()}));
  ASSIGN_OR_RETURN(Tensor column, idx.unsqueeze(-1));
  ASSIGN_OR_RETURN(Tensor hits, eq(column, classes));
  return to(hits, DType::kI64);
}

}  // namespace ts
