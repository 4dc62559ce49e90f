// Copies between layouts, dtypes and devices, and the reshapes that may need
// one.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tensor/backend.h"
#include "tensor/ops.h"
#include "tensor/ops/checks.h"
#include "tensor/status_macros.h"

namespace ts {
namespace {

// Whether some element of t is reachable by two indices (an expanded dim).
bool has_internal_overlap(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] > 1 && t.strides()[d] == 0) return true;
  }
  return false;
}

}  // namespace

absl::Status copy_(const Tensor& dst, const Tensor& src) {
  RETURN_IF_ERROR(ops_internal::check_defined("copy_", dst));
  RETURN_IF_ERROR(ops_internal::check_defined("copy_", src));
  if (has_internal_overlap(dst)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "copy_: destination ", dst.describe(), " has expanded dims; writing it would be ambiguous"));
  }
  absl::StatusOr<Tensor> expanded = src.expand(dst.shape());
  if (!expanded.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("copy_: source ", src.describe(),
                                                   " cannot be broadcast to destination ", dst.describe()));
  }
  if (dst.numel() == 0) return absl::OkStatus();
  if (src.device() == dst.device()) return backend_for(dst.device()).copy(*expanded, dst);

  // Across devices: convert and densify on the source's device, move the
  // bytes, and lay them out on the destination's device.
  ASSIGN_OR_RETURN(Tensor staged, empty(dst.shape(), {dst.dtype(), src.device()}));
  RETURN_IF_ERROR(backend_for(src.device()).copy(*expanded, staged));
  const Device device_side = src.device().is_cuda() ? src.device() : dst.device();
  if (dst.is_contiguous()) return backend_for(device_side).transfer(staged, dst);
  ASSIGN_OR_RETURN(Tensor landed, empty(dst.shape(), {dst.dtype(), dst.device()}));
  RETURN_IF_ERROR(backend_for(device_side).transfer(staged, landed));
  return backend_for(dst.device()).copy(landed, dst);
}

absl::Status fill_(const Tensor& dst, const Scalar& value) {
  RETURN_IF_ERROR(ops_internal::check_defined("fill_", dst));
  if (dst.numel() == 0) return absl::OkStatus();
  return backend_for(dst.device()).fill(dst, value);
}

absl::StatusOr<Tensor> clone(const Tensor& x) {
  RETURN_IF_ERROR(ops_internal::check_defined("clone", x));
  ASSIGN_OR_RETURN(Tensor out, empty(x.shape(), {x.dtype(), x.device()}));
  RETURN_IF_ERROR(copy_(out, x));
  return out;
}

absl::StatusOr<Tensor> contiguous(const Tensor& x) {
  RETURN_IF_ERROR(ops_internal::check_defined("contiguous", x));
  if (x.is_contiguous()) return x;
  return clone(x);
}

absl::StatusOr<Tensor> to(const Tensor& x, DType dtype) {
  RETURN_IF_ERROR(ops_internal::check_defined("to", x));
  if (x.dtype() == dtype) return x;
  ASSIGN_OR_RETURN(Tensor out, empty(x.shape(), {dtype, x.device()}));
  RETURN_IF_ERROR(copy_(out, x));
  return out;
}

absl::StatusOr<Tensor> to(const Tensor& x, Device device) {
  RETURN_IF_ERROR(ops_internal::check_defined("to", x));
  if (x.device() == device) return x;
  ASSIGN_OR_RETURN(Tensor out, empty(x.shape(), {x.dtype(), device}));
  RETURN_IF_ERROR(copy_(out, x));
  return out;
}

absl::StatusOr<Tensor> reshape(const Tensor& x, Dims shape) {
  RETURN_IF_ERROR(ops_internal::check_defined("reshape", x));
  absl::StatusOr<Tensor> view = x.view(shape);
  if (view.ok() || x.is_contiguous()) return view;  // a contiguous x fails only on a bad shape
  ASSIGN_OR_RETURN(Tensor dense, clone(x));
  return dense.view(shape);
}

absl::StatusOr<Tensor> flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  RETURN_IF_ERROR(ops_internal::check_defined("flatten", x));
  if (x.dim() == 0) return reshape(x, {1});
  ASSIGN_OR_RETURN(int64_t start, normalize_dim("flatten", start_dim, x.dim()));
  ASSIGN_OR_RETURN(int64_t end, normalize_dim("flatten", end_dim, x.dim()));
  if (start > end) {
    return absl::InvalidArgumentError(
        absl::StrCat("flatten: start_dim ", start_dim, " comes after end_dim ", end_dim));
  }
  Shape shape(x.shape().begin(), x.shape().begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= x.shape()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), x.shape().begin() + end + 1, x.shape().end());
  return reshape(x, shape);
}

template <typename T>
absl::StatusOr<std::vector<T>> to_vector(const Tensor& x) {
  RETURN_IF_ERROR(ops_internal::check_defined("to_vector", x));
  ASSIGN_OR_RETURN(Tensor host, empty(x.shape(), {dtype_of<T>, Device::cpu()}));
  RETURN_IF_ERROR(copy_(host, x));
  std::vector<T> values(host.numel());
  if (!values.empty()) std::memcpy(values.data(), host.raw_data(), values.size() * sizeof(T));
  return values;
}

template <typename T>
absl::StatusOr<T> item(const Tensor& x) {
  RETURN_IF_ERROR(ops_internal::check_defined("item", x));
  if (x.numel() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("item: ", x.describe(), " has ", x.numel(),
                                                   " elements, not one"));
  }
  ASSIGN_OR_RETURN(std::vector<T> values, to_vector<T>(x));
  return values[0];
}

#define TS_INSTANTIATE_HOST_ACCESS(T)                                 \
  template absl::StatusOr<std::vector<T>> to_vector(const Tensor& x); \
  template absl::StatusOr<T> item(const Tensor& x);
TS_INSTANTIATE_HOST_ACCESS(uint8_t)
TS_INSTANTIATE_HOST_ACCESS(int32_t)
TS_INSTANTIATE_HOST_ACCESS(int64_t)
TS_INSTANTIATE_HOST_ACCESS(Half)
TS_INSTANTIATE_HOST_ACCESS(BFloat16)
TS_INSTANTIATE_HOST_ACCESS(float)
TS_INSTANTIATE_HOST_ACCESS(double)
#undef TS_INSTANTIATE_HOST_ACCESS

// std::vector<bool> is bit-packed, so bool goes through uint8_t.
template <>
absl::StatusOr<std::vector<bool>> to_vector<bool>(const Tensor& x) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, to_vector<uint8_t>(x));
  return std::vector<bool>(bytes.begin(), bytes.end());
}

template <>
absl::StatusOr<bool> item<bool>(const Tensor& x) {
  ASSIGN_OR_RETURN(uint8_t byte, item<uint8_t>(x));
  return byte != 0;
}

}  // namespace ts
