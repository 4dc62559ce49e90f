// Argument checks shared by the op frontends; each error names the op.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tensor/tensor.h"

namespace ts::ops_internal {

absl::Status check_defined(absl::string_view op, const Tensor& t);
// All tensors defined and on one device.
absl::Status check_same_device(absl::string_view op, absl::Span<const Tensor* const> tensors);
absl::Status check_floating(absl::string_view op, const Tensor& t);
// An index tensor: i32 or i64. Returns it as a contiguous i64 tensor.
absl::StatusOr<Tensor> as_index(absl::string_view op, const Tensor& index);
// Every value of `index` (i64) in [0, size); the error names op, dim and the
// offending value.
absl::Status check_index_range(absl::string_view op, const Tensor& index, int64_t size, int64_t dim);

}  // namespace ts::ops_internal
