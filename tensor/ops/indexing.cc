// Joining (cat, stack) and index-driven ops (index_select, gather,
// scatter_add, one_hot).
#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts {

Tensor cat(absl::Span<const Tensor> tensors, int64_t dim) {
  TS_CHECK(!tensors.empty(), "cat: no tensors");
  const Tensor& first = tensors[0];
  for (const Tensor& t : tensors) check_same_device("cat", {&first, &t});
  TS_CHECK(first.dim() > 0, "cat: cannot concatenate 0-dim tensors");
  const int64_t d = normalize_dim("cat", dim, first.dim());
  DType dtype = first.dtype();
  Shape shape = first.shape();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    bool matches = t.dim() == first.dim();
    for (int64_t j = 0; matches && j < t.dim(); ++j) matches = j == d || t.shape()[j] == first.shape()[j];
    TS_CHECK(matches, "cat: tensor ", i, " ", t.describe(), " does not match ", first.describe(), " outside dim ", dim);
    shape[d] += t.shape()[d];
    dtype = promote_types(dtype, t.dtype());
  }
  std::vector<Tensor> inputs;
  for (const Tensor& t : tensors) inputs.push_back(contiguous(to(t, dtype)));
  Tensor out = empty(shape, {dtype, first.device()});
  if (out.numel() > 0) backend_for(out.device()).cat(inputs, d, out);
  return out;
}

Tensor stack(absl::Span<const Tensor> tensors, int64_t dim) {
  TS_CHECK(!tensors.empty(), "stack: no tensors");
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_defined("stack", tensors[i]);
    TS_CHECK(tensors[i].shape() == tensors[0].shape(), "stack: tensor ", i, " ", tensors[i].describe(),
             " differs in shape from ", tensors[0].describe());
    expanded.push_back(tensors[i].unsqueeze(dim));
  }
  return cat(expanded, dim);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  check_same_device("index_select", {&x, &index});
  TS_CHECK(index.dim() <= 1, "index_select: index must be 1-D, got ", index.describe());
  const int64_t d = normalize_dim("index_select", dim, x.dim());
  const Tensor idx = as_index("index_select", index);
  const Tensor x_view = x.dim() == 0 ? x.unsqueeze(0) : x;
  check_index_range("index_select", idx, x_view.shape()[d], d);
  const Tensor input = contiguous(x_view);
  Shape shape = input.shape();
  shape[d] = idx.numel();
  Tensor out = empty(shape, {x.dtype(), x.device()});
  if (out.numel() > 0) backend_for(x.device()).index_select(input, d, idx, out);
  if (x.dim() == 0) return out.view(index.shape());
  return out;
}

namespace {

// gather/scatter shape rule: same number of dims, and index no larger than
// `other` in any dim except (when skip_dim) the indexed one.
void check_index_shape(absl::string_view op, const Tensor& index, const Tensor& other, int64_t dim, bool skip_dim,
                       absl::string_view other_name) {
  bool ok = index.dim() == other.dim();
  for (int64_t d = 0; ok && d < index.dim(); ++d) {
    if (skip_dim && d == dim) continue;
    ok = index.shape()[d] <= other.shape()[d];
  }
  TS_CHECK(ok, op, ": index ", index.describe(), " does not fit ", other_name, " ", other.describe(), " (dim ", dim,
           ")");
}

}  // namespace

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  check_same_device("gather", {&x, &index});
  const int64_t d = normalize_dim("gather", dim, x.dim());
  check_index_shape("gather", index, x, d, true, "input");
  const Tensor idx = as_index("gather", index);
  check_index_range("gather", idx, x.dim() == 0 ? 1 : x.shape()[d], d);
  const Tensor input = contiguous(x);
  Tensor out = empty(index.shape(), {x.dtype(), x.device()});
  if (out.numel() > 0) backend_for(x.device()).gather(input, d, idx, out);
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  check_same_device("scatter_add", {&x, &index, &src});
  const int64_t d = normalize_dim("scatter_add", dim, x.dim());
  check_index_shape("scatter_add", index, x, d, true, "input");
  check_index_shape("scatter_add", index, src, d, false, "src");
  TS_CHECK(src.dtype() == x.dtype(), "scatter_add: src ", src.describe(), " and input ", x.describe(),
           " differ in dtype");
  TS_CHECK(x.dtype() != DType::kBool, "scatter_add: not supported for bool tensors");
  const Tensor idx = as_index("scatter_add", index);
  check_index_range("scatter_add", idx, x.dim() == 0 ? 1 : x.shape()[d], d);
  // Only the part of src that index covers takes part.
  Tensor src_part = src;
  for (int64_t j = 0; j < index.dim(); ++j) src_part = src_part.narrow(j, 0, index.shape()[j]);
  // f16/bf16 add in f32 and round once, as every other op: summed in their
  // own type (an embedding's gradient rows for a frequent word), the adds
  // stop counting once the sum is a few hundred times each one in bf16.
  const DType compute = is_reduced_float(x.dtype()) ? DType::kF32 : x.dtype();
  const Tensor values = contiguous(to(src_part, compute));
  // A fresh row-major copy: the backend adds into contiguous memory (a clone
  // would keep a channels-last x's layout).
  Tensor out = empty(x.shape(), {compute, x.device()});
  copy_(out, x);
  if (idx.numel() > 0) backend_for(x.device()).scatter_add(out, d, idx, values);
  return to(out, x.dtype());
}

Tensor one_hot(const Tensor& index, int64_t num_classes) {
  const Tensor idx = as_index("one_hot", index);
  TS_CHECK(num_classes > 0, "one_hot: num_classes must be positive, got ", num_classes);
  check_index_range("one_hot", idx, num_classes, idx.dim());
  const Tensor classes = arange(0, static_cast<double>(num_classes), 1, {DType::kI64, idx.device()});
  return to(eq(idx.unsqueeze(-1), classes), DType::kI64);
}

}  // namespace ts
