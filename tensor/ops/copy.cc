// Copies between layouts, dtypes and devices, and the reshapes that may need
// one.
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts {
namespace {

// Whether some element of t is reachable by two indices (an expanded dim).
bool has_internal_overlap(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] > 1 && t.strides()[d] == 0) return true;
  }
  return false;
}

// The bytes [begin, end) of its storage that t covers when its elements fill
// them exactly (dense in some order of its dims); nullopt otherwise.
std::optional<std::pair<int64_t, int64_t>> dense_byte_range(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims longer than 1
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.shape()[d] > 1) dims.emplace_back(t.strides()[d], t.shape()[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return std::nullopt;
    expected *= size;
  }
  const int64_t item = dtype_size(t.dtype());
  return std::make_pair(t.offset() * item, (t.offset() + t.numel()) * item);
}

// Whether src and dst share memory without being the same elements in the
// same order: a copy would read what it already overwrote. As PyTorch's
// assert_no_partial_overlap, only dense tensors are compared; interleaved
// views (x[:, 0] and x[:, 1]) are too hard to tell and pass.
bool overlaps_partially(const Tensor& dst, const Tensor& src) {
  if (dst.storage() != src.storage() || dst.numel() == 0 || src.numel() == 0) return false;
  const auto d = dense_byte_range(dst), s = dense_byte_range(src);
  if (!d || !s || d->second <= s->first || s->second <= d->first) return false;
  const bool same_elements = *d == *s && dst.dtype() == src.dtype() && Dims(dst.shape()) == Dims(src.shape()) &&
                             Dims(dst.strides()) == Dims(src.strides());
  return !same_elements;
}

// Whether a tensor of shape `from` broadcasts to exactly `to`.
bool expands_to(Dims from, Dims to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != to[lead + i] && from[i] != 1) return false;
  }
  return true;
}

}  // namespace

void copy_(const Tensor& dst, const Tensor& src) {
  check_defined("copy_", dst);
  check_defined("copy_", src);
  TS_CHECK(!has_internal_overlap(dst), "copy_: destination ", dst.describe(),
           " has expanded dims; writing it would be ambiguous");
  TS_CHECK(expands_to(src.shape(), dst.shape()), "copy_: source ", src.describe(),
           " cannot be broadcast to destination ", dst.describe());
  TS_CHECK(!overlaps_partially(dst, src), "copy_: source ", src.describe(), " and destination ", dst.describe(),
           " share part of their memory; copy the source first");
  const Tensor expanded = src.expand(dst.shape());
  if (dst.numel() == 0) return;
  if (src.device() == dst.device()) {
    backend_for(dst.device()).copy(expanded, dst);
    return;
  }
  // Across devices: convert and densify (in dst's layout) on the source's
  // device, move the bytes, and lay them out on the destination's device.
  const MemoryFormat format = dst.suggest_memory_format();
  const Tensor staged = empty(dst.shape(), {dst.dtype(), src.device(), format});
  backend_for(src.device()).copy(expanded, staged);
  const Device device_side = src.device().is_cuda() ? src.device() : dst.device();
  if (dst.is_contiguous(format)) {
    backend_for(device_side).transfer(staged, dst);
    return;
  }
  const Tensor landed = empty(dst.shape(), {dst.dtype(), dst.device(), format});
  backend_for(device_side).transfer(staged, landed);
  backend_for(dst.device()).copy(landed, dst);
}

void fill_(const Tensor& dst, const Scalar& value) {
  check_defined("fill_", dst);
  check_storable("fill_", value, dst.dtype());
  if (dst.numel() > 0) backend_for(dst.device()).fill(dst, value);
}

Tensor clone(const Tensor& x) {
  check_defined("clone", x);
  Tensor out = empty(x.shape(), {x.dtype(), x.device(), x.suggest_memory_format()});
  copy_(out, x);
  return out;
}

Tensor contiguous(const Tensor& x, MemoryFormat format) {
  check_defined("contiguous", x);
  if (x.is_contiguous(format)) {
    if (x.suggest_memory_format() == format) return x;
    // Dense in both layouts (a size-1 channel or spatial extent) but made in
    // the other: the same memory, with the strides that say `format`, so
    // the layers after it keep that layout.
    return Tensor(x.storage(), x.shape(), dense_strides(x.shape(), format), x.offset(), x.dtype());
  }
  Tensor out = empty(x.shape(), {x.dtype(), x.device(), format});
  copy_(out, x);
  return out;
}

Tensor to(const Tensor& x, DType dtype) {
  check_defined("to", x);
  if (x.dtype() == dtype) return x;
  Tensor out = empty(x.shape(), {dtype, x.device(), x.suggest_memory_format()});
  copy_(out, x);
  return out;
}

Tensor to(const Tensor& x, Device device) {
  check_defined("to", x);
  if (x.device() == device) return x;
  Tensor out = empty(x.shape(), {x.dtype(), device, x.suggest_memory_format()});
  copy_(out, x);
  return out;
}

Tensor reshape(const Tensor& x, Dims shape) {
  check_defined("reshape", x);
  if (std::optional<Tensor> view = x.try_view(shape)) return *std::move(view);
  return contiguous(x).view(shape);
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  check_defined("flatten", x);
  if (x.dim() == 0) return reshape(x, {1});
  const int64_t start = normalize_dim("flatten", start_dim, x.dim());
  const int64_t end = normalize_dim("flatten", end_dim, x.dim());
  TS_CHECK(start <= end, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim);
  Shape shape(x.shape().begin(), x.shape().begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= x.shape()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), x.shape().begin() + end + 1, x.shape().end());
  return reshape(x, shape);
}

template <typename T>
std::vector<T> to_vector(const Tensor& x) {
  check_defined("to_vector", x);
  Tensor host = empty(x.shape(), {dtype_of<T>, Device::cpu()});
  copy_(host, x);
  std::vector<T> values(host.numel());
  if (!values.empty()) std::memcpy(values.data(), host.raw_data(), values.size() * sizeof(T));
  return values;
}

template <typename T>
T item(const Tensor& x) {
  check_defined("item", x);
  TS_CHECK(x.numel() == 1, "item: ", x.describe(), " has ", x.numel(), " elements, not one");
  return to_vector<T>(x)[0];
}

#define TS_INSTANTIATE_HOST_ACCESS(T)                 \
  template std::vector<T> to_vector(const Tensor& x); \
  template T item(const Tensor& x);
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
std::vector<bool> to_vector<bool>(const Tensor& x) {
  const std::vector<uint8_t> bytes = to_vector<uint8_t>(x);
  return std::vector<bool>(bytes.begin(), bytes.end());
}

template <>
bool item<bool>(const Tensor& x) {
  return item<uint8_t>(x) != 0;
}

}  // namespace ts
