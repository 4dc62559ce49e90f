// Argument checks shared by the op frontends of tensor/ and nn/functional:
// each throws an Error that names the op and the tensors at fault.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace ts {

void check_defined(absl::string_view op, const Tensor& t);
// All tensors defined and on one device.
void check_same_device(absl::string_view op, std::initializer_list<const Tensor*> tensors);
void check_floating(absl::string_view op, const Tensor& t);
// An index tensor: i32 or i64. Returns it as a contiguous i64 tensor.
Tensor as_index(absl::string_view op, const Tensor& index);
// Every value of `index` (i64) in [0, size); the error names op, dim and the
// offending value.
void check_index_range(absl::string_view op, const Tensor& index, int64_t size, int64_t dim);

}  // namespace ts
