#include "data/loader/collate.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::data {
namespace {

absl::StatusOr<Tensor> allocate_batch(Dims shape, DType dtype, HostBufferPool* pool) {
  if (pool == nullptr) return empty(shape, {dtype, Device::cpu()});
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, pool->allocate(shape_numel(shape) * dtype_size(dtype)));
  return Tensor(std::move(storage), Shape(shape.begin(), shape.end()), contiguous_strides(shape), 0, dtype);
}

// Checks field `f` of every example against example 0's and returns the
// batch's shape for it ([B] + the sample shape, dim 0 the longest when
// padded).
absl::StatusOr<Shape> batch_shape(absl::Span<const Example> examples, size_t f, bool padded) {
  const Tensor& first = examples[0].fields[f];
  if (padded && first.dim() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("collate: padded field ", f, " of example 0 is a scalar (",
                                                   first.describe(), "); padding needs a sequence dim"));
  }
  Shape shape = {static_cast<int64_t>(examples.size())};
  shape.insert(shape.end(), first.shape().begin(), first.shape().end());
  for (size_t e = 1; e < examples.size(); ++e) {
    const Tensor& t = examples[e].fields[f];
    const bool same_rank = t.dim() == first.dim();
    const bool same_shape = same_rank && std::equal(t.shape().begin() + (padded ? 1 : 0), t.shape().end(),
                                                    first.shape().begin() + (padded ? 1 : 0));
    if (t.dtype() != first.dtype() || !same_shape) {
      return absl::InvalidArgumentError(absl::StrCat("collate: field ", f, " of example ", e, " is ", t.describe(),
                                                     " but example 0 has ", first.describe(),
                                                     padded ? " (a padded field may differ in dim 0 only)" : ""));
    }
    if (padded) shape[1] = std::max(shape[1], t.size(0));
  }
  return shape;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> collate(absl::Span<const Example> examples, const CollateOptions& options,
                                            HostBufferPool* pool) {
  if (examples.empty()) return absl::InvalidArgumentError("collate: no examples");
  const size_t num_fields = examples[0].fields.size();
  for (size_t e = 0; e < examples.size(); ++e) {
    if (examples[e].fields.size() != num_fields) {
      return absl::InvalidArgumentError(absl::StrCat("collate: example ", e, " has ", examples[e].fields.size(),
                                                     " fields but example 0 has ", num_fields));
    }
    for (size_t f = 0; f < num_fields; ++f) {
      const Tensor& t = examples[e].fields[f];
      if (!t.defined() || !t.device().is_cpu()) {
        return absl::InvalidArgumentError(absl::StrCat("collate: field ", f, " of example ", e, " is ",
                                                       t.defined() ? t.describe() : "undefined",
                                                       "; fields must be CPU tensors"));
      }
    }
  }
  for (int f : options.padded_fields) {
    if (f < 0 || static_cast<size_t>(f) >= num_fields) {
      return absl::InvalidArgumentError(
          absl::StrCat("collate: padded field ", f, " does not exist (examples have ", num_fields, " fields)"));
    }
  }

  std::vector<Tensor> out;
  out.reserve(num_fields);
  for (size_t f = 0; f < num_fields; ++f) {
    const bool padded = std::find(options.padded_fields.begin(), options.padded_fields.end(), static_cast<int>(f)) !=
                        options.padded_fields.end();
    ASSIGN_OR_RETURN(Shape shape, batch_shape(examples, f, padded));
    const DType dtype = examples[0].fields[f].dtype();
    ASSIGN_OR_RETURN(Tensor batch, allocate_batch(shape, dtype, pool));
    const int64_t row_bytes = (shape_numel(shape) / shape[0]) * dtype_size(dtype);
    char* dst = static_cast<char*>(batch.raw_data());
    for (size_t e = 0; e < examples.size(); ++e) {
      const Tensor src = contiguous(examples[e].fields[f]);
      const int64_t bytes = src.numel() * src.itemsize();
      if (bytes > 0) std::memcpy(dst + e * row_bytes, src.raw_data(), bytes);
      if (padded && bytes < row_bytes) {
        fill_(batch.select(0, static_cast<int64_t>(e)).narrow(0, src.size(0), shape[1] - src.size(0)),
              options.pad_value);
      }
    }
    out.push_back(std::move(batch));
  }
  return out;
}

}  // namespace ts::data
