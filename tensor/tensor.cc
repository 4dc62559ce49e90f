#include "tensor/tensor.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace ts {

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset),
      numel_(shape_numel(shape_)),
      dtype_(dtype) {}

Tensor Tensor::allocate(Dims shape, DType dtype, Device device, MemoryFormat format) {
  int64_t nbytes = dtype_size(dtype);
  for (int64_t s : shape) {
    TS_CHECK(s >= 0, "allocate: negative size in shape ", shape_str(shape));
    TS_CHECK(!__builtin_mul_overflow(nbytes, s, &nbytes), "allocate: ", dtype_name(dtype), shape_str(shape),
             " has more bytes than an int64 counts");
  }
  return Tensor(Storage::allocate(nbytes, device), Shape(shape.begin(), shape.end()), dense_strides(shape, format), 0,
                dtype);
}

int64_t Tensor::size(int64_t d) const {
  TS_CHECK_INDEX(d >= -dim() && d < dim(), "size(", d, ") of ", describe());
  return shape_[d < 0 ? d + dim() : d];
}

int64_t Tensor::stride(int64_t d) const {
  TS_CHECK_INDEX(d >= -dim() && d < dim(), "stride(", d, ") of ", describe());
  return strides_[d < 0 ? d + dim() : d];
}

bool Tensor::is_contiguous() const {
  // No element, no layout: an empty tensor is contiguous whatever its strides (as in PyTorch).
  if (numel_ == 0) return true;
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

bool Tensor::is_contiguous(MemoryFormat format) const {
  if (format == MemoryFormat::kContiguous) return is_contiguous();
  if (dim() != 4 && dim() != 5) return false;
  if (numel_ == 0) return true;
  // Channels, then the spatial dims from the last, then the batch.
  int64_t expected = 1;
  auto dense_at = [&](int64_t d) {
    if (shape_[d] == 1) return true;
    if (strides_[d] != expected) return false;
    expected *= shape_[d];
    return true;
  };
  if (!dense_at(1)) return false;
  for (int64_t d = dim() - 1; d >= 2; --d) {
    if (!dense_at(d)) return false;
  }
  return dense_at(0);
}

MemoryFormat Tensor::suggest_memory_format() const {
  if (!is_contiguous(MemoryFormat::kChannelsLast)) return MemoryFormat::kContiguous;
  if (!is_contiguous()) return MemoryFormat::kChannelsLast;
  // Dense in both orders: a size-1 channel or spatial extent ([N, 1, H, W]
  // grayscale images, [N, C, 1, 1] pooled features). The strides of the
  // size-1 dims say which layout the tensor was made in, as PyTorch reads
  // them; where they say neither, row-major.
  // Compared in place, without building the two stride vectors: this runs
  // for every op's result on such tensors.
  int64_t expected = 1;
  bool channels_last = true;
  const auto step = [&](int64_t d) {
    channels_last = channels_last && strides_[d] == expected;
    expected *= std::max<int64_t>(shape_[d], 1);
  };
  step(1);
  for (int64_t d = dim() - 1; d >= 2; --d) step(d);
  step(0);
  bool row_major = true;
  expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    row_major = row_major && strides_[d] == expected;
    expected *= std::max<int64_t>(shape_[d], 1);
  }
  return channels_last && !row_major ? MemoryFormat::kChannelsLast : MemoryFormat::kContiguous;
}

void* Tensor::raw_data() const {
  if (storage_ == nullptr || storage_->data() == nullptr) return nullptr;
  return static_cast<char*>(storage_->data()) + offset_ * itemsize();
}

void Tensor::check_element_type(DType requested) const {
  TS_CHECK(requested == dtype_, "data<", dtype_name(requested), ">() on ", describe());
}

std::string Tensor::describe() const {
  if (!defined()) return "undefined tensor";
  return absl::StrCat(dtype_name(dtype_), shape_str(shape_), " on ", device().to_string());
}

Tensor Tensor::with_layout(Shape shape, Shape strides, int64_t offset) const {
  return Tensor(storage_, std::move(shape), std::move(strides), offset, dtype_);
}

namespace {

// Strides for viewing a tensor of (shape, strides) as `target`, or nullopt if
// no strides can: each run of old dims that the new shape splits or merges
// must be contiguous within itself (PyTorch's computeStride).
std::optional<Shape> view_strides(Dims shape, Dims strides, Dims target) {
  Shape out(target.size());
  // Empty tensors take any shape; a 0-dim tensor's one element any all-ones shape.
  if (shape_numel(shape) == 0 || shape.empty()) return contiguous_strides(target);
  int64_t view_d = static_cast<int64_t>(target.size()) - 1;
  int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    // End of a contiguous chunk: the next old dim does not continue it.
    if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= target[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// The shape `shape` asks for, its -1 inferred; throws unless it holds
// exactly numel elements.
Shape view_target(Dims shape, const Tensor& t) {
  Shape target(shape.begin(), shape.end());
  int64_t infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      TS_CHECK(infer < 0, "view: more than one -1 in ", shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else {
      TS_CHECK(target[i] >= 0, "view: negative size in ", shape_str(shape));
      // A zero anywhere makes the count 0 whatever the other sizes are.
      TS_CHECK(!__builtin_mul_overflow(known, target[i], &known) || absl::c_linear_search(target, 0), "view: shape ",
               shape_str(shape), " has more elements than an int64 can count");
    }
  }
  if (infer >= 0) {
    TS_CHECK(known != 0 && t.numel() % known == 0, "view: shape ", shape_str(shape), " is invalid for ", t.describe());
    target[infer] = t.numel() / known;
  }
  TS_CHECK(shape_numel(target) == t.numel(), "view: shape ", shape_str(shape), " has ", shape_numel(target),
           " elements but ", t.describe(), " has ", t.numel());
  return target;
}

}  // namespace

std::optional<Tensor> Tensor::try_view(Dims shape) const {
  TS_CHECK(defined(), "view: undefined tensor");
  Shape target = view_target(shape, *this);
  std::optional<Shape> strides = view_strides(shape_, strides_, target);
  if (!strides) return std::nullopt;
  return with_layout(std::move(target), *std::move(strides), offset_);
}

Tensor Tensor::view(Dims shape) const {
  std::optional<Tensor> out = try_view(shape);
  TS_CHECK(out.has_value(), "view: ", describe(), " with strides ", shape_str(strides_), " cannot be viewed as ",
           shape_str(view_target(shape, *this)), " without a copy; use reshape");
  return *std::move(out);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  TS_CHECK(defined(), "slice: undefined tensor");
  TS_CHECK(this->dim() > 0, "slice: cannot slice a 0-dim tensor");
  const int64_t d = normalize_dim("slice", dim, this->dim());
  TS_CHECK(step > 0, "slice: step must be positive, got ", step);
  const int64_t n = shape_[d];
  auto clamp = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  Shape shape = shape_;
  Shape strides = strides_;
  shape[d] = (end - start + step - 1) / step;
  strides[d] = strides_[d] * step;
  return with_layout(std::move(shape), std::move(strides), offset_ + start * strides_[d]);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  TS_CHECK(defined(), "narrow: undefined tensor");
  TS_CHECK(this->dim() > 0, "narrow: cannot narrow a 0-dim tensor");
  const int64_t d = normalize_dim("narrow", dim, this->dim());
  const int64_t n = shape_[d];
  if (start < 0) start += n;
  TS_CHECK_INDEX(start >= 0 && length >= 0 && start <= n && length <= n - start, "narrow: start ", start,
                 " and length ", length, " exceed dim ", dim, " of ", describe());
  return slice(d, start, start + length);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  TS_CHECK(defined(), "select: undefined tensor");
  TS_CHECK(this->dim() > 0, "select: cannot index a 0-dim tensor");
  const int64_t d = normalize_dim("select", dim, this->dim());
  const int64_t n = shape_[d];
  TS_CHECK_INDEX(index >= -n && index < n, "select: index ", index, " is out of range for dim ", dim, " of ",
                 describe());
  if (index < 0) index += n;
  Shape shape = shape_;
  Shape strides = strides_;
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return with_layout(std::move(shape), std::move(strides), offset_ + index * strides_[d]);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  TS_CHECK(defined(), "transpose: undefined tensor");
  if (dim() == 0) {
    // As PyTorch: a 0-dim tensor's only dims are 0 and -1.
    TS_CHECK_INDEX((dim0 == 0 || dim0 == -1) && (dim1 == 0 || dim1 == -1), "transpose: dims ", dim0, " and ", dim1,
                   " of a 0-dim tensor (only 0 and -1 name its dim)");
    return *this;
  }
  const int64_t a = normalize_dim("transpose", dim0, dim());
  const int64_t b = normalize_dim("transpose", dim1, dim());
  Shape shape = shape_;
  Shape strides = strides_;
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return with_layout(std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::permute(Dims dims) const {
  TS_CHECK(defined(), "permute: undefined tensor");
  TS_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute: ", shape_str(dims), " does not list the ", dim(),
           " dims of ", describe());
  Shape shape(dims.size());
  Shape strides(dims.size());
  // The kernels take at most 64 dims (make_layout): one word marks them.
  TS_CHECK(dims.size() <= 64, "permute: more than 64 dims");
  uint64_t seen = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = normalize_dim("permute", dims[i], dim());
    TS_CHECK(!(seen & (uint64_t{1} << d)), "permute: dim ", dims[i], " repeats in ", shape_str(dims));
    seen |= uint64_t{1} << d;
    shape[i] = shape_[d];
    strides[i] = strides_[d];
  }
  return with_layout(std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::expand(Dims shape) const {
  TS_CHECK(defined(), "expand: undefined tensor");
  TS_CHECK(shape.size() >= shape_.size(), "expand: ", describe(), " cannot expand to fewer dims ", shape_str(shape));
  const size_t lead = shape.size() - shape_.size();
  Shape out_shape(shape.size());
  Shape out_strides(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool is_new = i < lead;
    const int64_t have = is_new ? 1 : shape_[i - lead];
    const int64_t want = shape[i] == -1 && !is_new ? have : shape[i];
    TS_CHECK(want >= 0 && (have == want || have == 1), "expand: ", describe(), " cannot expand to ", shape_str(shape));
    out_shape[i] = want;
    out_strides[i] = (is_new || have != want) ? 0 : strides_[i - lead];
  }
  return with_layout(std::move(out_shape), std::move(out_strides), offset_);
}

Tensor Tensor::squeeze() const {
  Shape shape;
  Shape strides;
  for (int64_t i = 0; i < dim(); ++i) {
    if (shape_[i] == 1) continue;
    shape.push_back(shape_[i]);
    strides.push_back(strides_[i]);
  }
  return with_layout(std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::squeeze(int64_t dim) const {
  TS_CHECK(defined(), "squeeze: undefined tensor");
  const int64_t d = normalize_dim("squeeze", dim, this->dim());
  if (this->dim() == 0 || shape_[d] != 1) return *this;
  Shape shape = shape_;
  Shape strides = strides_;
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return with_layout(std::move(shape), std::move(strides), offset_);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  TS_CHECK(defined(), "unsqueeze: undefined tensor");
  const int64_t d = normalize_dim("unsqueeze", dim, this->dim() + 1);
  Shape shape = shape_;
  Shape strides = strides_;
  // The new dim's stride is whatever keeps the tensor contiguous if it was.
  const int64_t stride = d < this->dim() ? strides_[d] * shape_[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return with_layout(std::move(shape), std::move(strides), offset_);
}

}  // namespace ts
