#include "data/transforms/remap.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "tensor/shape.h"

namespace ts::data::transforms {
namespace {

// Elements move as fixed-size byte blocks, so one instantiation per element
// size serves every dtype and the innermost copy compiles to a single move.
template <size_t kSize>
struct Gather {
  const std::vector<std::vector<int64_t>>& maps;
  const Shape& src_strides;  // bytes
  const Shape& dst_strides;  // bytes

  void run(size_t d, const char* src, char* dst) const {
    const std::vector<int64_t>& map = maps[d];
    const int64_t n = static_cast<int64_t>(map.size());
    const int64_t src_stride = src_strides[d];
    if (d + 1 == maps.size()) {
      for (int64_t i = 0; i < n; ++i) {
        if (src != nullptr && map[i] >= 0) {
          std::memcpy(dst + i * kSize, src + map[i] * src_stride, kSize);
        } else {
          std::memset(dst + i * kSize, 0, kSize);
        }
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      run(d + 1, src != nullptr && map[i] >= 0 ? src + map[i] * src_stride : nullptr, dst + i * dst_strides[d]);
    }
  }
};

}  // namespace

std::vector<int64_t> window_map(int64_t size, int64_t start, int64_t length, bool reversed) {
  std::vector<int64_t> map(length);
  for (int64_t i = 0; i < length; ++i) {
    const int64_t s = start + (reversed ? length - 1 - i : i);
    map[i] = (s >= 0 && s < size) ? s : -1;
  }
  return map;
}

absl::StatusOr<Tensor> remap(const Tensor& x, absl::Span<const std::vector<int64_t>> maps) {
  if (!x.defined() || !x.device().is_cpu()) {
    return absl::InvalidArgumentError("remap: input must be a defined CPU tensor");
  }
  if (static_cast<int64_t>(maps.size()) != x.dim()) {
    return absl::InvalidArgumentError(absl::StrCat("remap: ", maps.size(), " index maps for ", x.describe()));
  }
  std::vector<std::vector<int64_t>> full(maps.begin(), maps.end());
  Shape out_shape(x.dim());
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (full[d].empty()) full[d] = window_map(x.size(d), 0, x.size(d));
    for (int64_t s : full[d]) {
      if (s < -1 || s >= x.size(d)) {
        return absl::InvalidArgumentError(
            absl::StrCat("remap: index ", s, " out of range for dim ", d, " of ", x.describe()));
      }
    }
    out_shape[d] = static_cast<int64_t>(full[d].size());
  }
  Tensor out = Tensor::allocate(out_shape, x.dtype(), Device::cpu());
  if (out.numel() == 0) return out;
  if (x.dim() == 0) {
    std::memcpy(out.raw_data(), x.raw_data(), x.itemsize());
    return out;
  }
  Shape src_strides(x.dim()), dst_strides = contiguous_strides(out_shape);
  for (int64_t d = 0; d < x.dim(); ++d) {
    src_strides[d] = x.stride(d) * x.itemsize();
    dst_strides[d] *= x.itemsize();
  }
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  switch (x.itemsize()) {
    case 1:
      Gather<1>{full, src_strides, dst_strides}.run(0, src, dst);
      break;
    case 2:
      Gather<2>{full, src_strides, dst_strides}.run(0, src, dst);
      break;
    case 4:
      Gather<4>{full, src_strides, dst_strides}.run(0, src, dst);
      break;
    case 8:
      Gather<8>{full, src_strides, dst_strides}.run(0, src, dst);
      break;
    default:
      return absl::InternalError(absl::StrCat("remap: unsupported element size ", x.itemsize()));
  }
  return out;
}

}  // namespace ts::data::transforms
