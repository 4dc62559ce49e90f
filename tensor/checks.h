// Argument checks shared by the op frontends of tensor/ and nn/functional:
// each throws an Error that names the op and the tensors at fault.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "absl/strings/string_view.h"
#include "tensor/scalar.h"
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
// A value an op stores into elements of `dtype` (fill_, masked_fill, where's
// scalar) that the type can hold: a finite float that would become inf
// (70000 into f16, 1e39 into f32), an integer out of the type's range, NaN
// or inf into an integer type are errors naming the op, the value and the
// type, as PyTorch's checked conversion makes them. Unlike it, what the type
// holds after rounding is judged, not the value before: 65519 into f16 is
// 65504 (as PyTorch's fill_ gives, where its masked_fill refuses), 3.7 into
// i32 is 3, 255.5 into u8 is 255. Negative integers into u8 wrap as in C (-1
// is 255) down to -255, as PyTorch lets them; bool holds anything.
void check_storable(absl::string_view op, const Scalar& value, DType dtype);

}  // namespace ts
