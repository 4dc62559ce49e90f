#include "tensor/tensor.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"

namespace ts {

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset,
               DType dtype)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset),
      numel_(shape_numel(shape_)),
      dtype_(dtype) {}

absl::StatusOr<Tensor> Tensor::allocate(Dims shape, DType dtype, Device device) {
  for (int64_t s : shape) {
    if (s < 0) {
      return absl::InvalidArgumentError(absl::StrCat("negative size in shape ", shape_str(shape)));
    }
  }
  absl::StatusOr<std::shared_ptr<Storage>> storage =
      Storage::allocate(shape_numel(shape) * dtype_size(dtype), device);
  if (!storage.ok()) return storage.status();
  return Tensor(*std::move(storage), Shape(shape.begin(), shape.end()), contiguous_strides(shape), 0,
                dtype);
}

namespace {
[[noreturn]] void fatal(const std::string& message) {
  std::fprintf(stderr, "fatal: %s\n", message.c_str());
  std::abort();
}
}  // namespace

int64_t Tensor::size(int64_t d) const {
  if (d < -dim() || d >= dim()) fatal(absl::StrCat("size(", d, ") of ", describe()));
  return shape_[d < 0 ? d + dim() : d];
}

int64_t Tensor::stride(int64_t d) const {
  if (d < -dim() || d >= dim()) fatal(absl::StrCat("stride(", d, ") of ", describe()));
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

void* Tensor::raw_data() const {
  if (storage_ == nullptr || storage_->data() == nullptr) return nullptr;
  return static_cast<char*>(storage_->data()) + offset_ * itemsize();
}

void Tensor::check_element_type(DType requested) const {
  if (requested != dtype_) {
    fatal(absl::StrCat("data<", dtype_name(requested), ">() on a tensor of dtype ", dtype_name(dtype_)));
  }
}

std::string Tensor::describe() const {
  if (!defined()) return "undefined tensor";
  return absl::StrCat(dtype_name(dtype_), shape_str(shape_), " on ", device().to_string());
}

Tensor Tensor::with_layout(Shape shape, Shape strides, int64_t offset) const {
  return Tensor(storage_, std::move(shape), std::move(strides), offset, dtype_);
}

namespace {

absl::Status undefined_error(absl::string_view op) {
  return absl::InvalidArgumentError(absl::StrCat(op, ": undefined tensor"));
}

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

}  // namespace

absl::StatusOr<Tensor> Tensor::view(Dims shape) const {
  if (!defined()) return undefined_error("view");
  Shape target(shape.begin(), shape.end());
  int64_t infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) return absl::InvalidArgumentError(absl::StrCat("view: more than one -1 in ", shape_str(shape)));
      infer = static_cast<int64_t>(i);
    } else if (target[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("view: negative size in ", shape_str(shape)));
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel_ % known != 0) {
      return absl::InvalidArgumentError(absl::StrCat("view: shape ", shape_str(shape),
                                                     " is invalid for ", describe()));
    }
    target[infer] = numel_ / known;
  }
  if (shape_numel(target) != numel_) {
    return absl::InvalidArgumentError(absl::StrCat("view: shape ", shape_str(shape), " has ",
                                                   shape_numel(target), " elements but ", describe(),
                                                   " has ", numel_));
  }
  std::optional<Shape> strides = view_strides(shape_, strides_, target);
  if (!strides) {
    return absl::InvalidArgumentError(absl::StrCat(
        "view: ", describe(), " with strides ", shape_str(strides_), " cannot be viewed as ",
        shape_str(target), " without a copy; use reshape"));
  }
  return with_layout(std::move(target), *std::move(strides), offset_);
}

absl::StatusOr<Tensor> Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  if (!defined()) return undefined_error("slice");
  if (this->dim() == 0) return absl::InvalidArgumentError("slice: cannot slice a 0-dim tensor");
  absl::StatusOr<int64_t> d = normalize_dim("slice", dim, this->dim());
  if (!d.ok()) return d.status();
  if (step <= 0) return absl::InvalidArgumentError(absl::StrCat("slice: step must be positive, got ", step));
  const int64_t n = shape_[*d];
  auto clamp = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  Shape shape = shape_;
  Shape strides = strides_;
  shape[*d] = (end - start + step - 1) / step;
  strides[*d] = strides_[*d] * step;
  return with_layout(std::move(shape), std::move(strides), offset_ + start * strides_[*d]);
}

absl::StatusOr<Tensor> Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  if (!defined()) return undefined_error("narrow");
  if (this->dim() == 0) return absl::InvalidArgumentError("narrow: cannot narrow a 0-dim tensor");
  absl::StatusOr<int64_t> d = normalize_dim("narrow", dim, this->dim());
  if (!d.ok()) return d.status();
  const int64_t n = shape_[*d];
  if (start < 0) start += n;
  if (start < 0 || length < 0 || start + length > n) {
    return absl::OutOfRangeError(absl::StrCat("narrow: start ", start, " and length ", length,
                                              " exceed dim ", dim, " of ", describe()));
  }
  return slice(*d, start, start + length);
}

absl::StatusOr<Tensor> Tensor::select(int64_t dim, int64_t index) const {
  if (!defined()) return undefined_error("select");
  if (this->dim() == 0) return absl::InvalidArgumentError("select: cannot index a 0-dim tensor");
  absl::StatusOr<int64_t> d = normalize_dim("select", dim, this->dim());
  if (!d.ok()) return d.status();
  const int64_t n = shape_[*d];
  if (index < -n || index >= n) {
    return absl::OutOfRangeError(absl::StrCat("select: index ", index, " is out of range for dim ",
                                              dim, " of ", describe()));
  }
  if (index < 0) index += n;
  Shape shape = shape_;
  Shape strides = strides_;
  shape.erase(shape.begin() + *d);
  strides.erase(strides.begin() + *d);
  return with_layout(std::move(shape), std::move(strides), offset_ + index * strides_[*d]);
}

absl::StatusOr<Tensor> Tensor::transpose(int64_t dim0, int64_t dim1) const {
  if (!defined()) return undefined_error("transpose");
  if (dim() == 0) return *this;
  absl::StatusOr<int64_t> a = normalize_dim("transpose", dim0, dim());
  if (!a.ok()) return a.status();
  absl::StatusOr<int64_t> b = normalize_dim("transpose", dim1, dim());
  if (!b.ok()) return b.status();
  Shape shape = shape_;
  Shape strides = strides_;
  std::swap(shape[*a], shape[*b]);
  std::swap(strides[*a], strides[*b]);
  return with_layout(std::move(shape), std::move(strides), offset_);
}

absl::StatusOr<Tensor> Tensor::permute(Dims dims) const {
  if (!defined()) return undefined_error("permute");
  if (static_cast<int64_t>(dims.size()) != dim()) {
    return absl::InvalidArgumentError(absl::StrCat("permute: ", shape_str(dims), " does not list the ",
                                                   dim(), " dims of ", describe()));
  }
  Shape shape(dims.size());
  Shape strides(dims.size());
  uint64_t seen = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    absl::StatusOr<int64_t> d = normalize_dim("permute", dims[i], dim());
    if (!d.ok()) return d.status();
    if (seen & (uint64_t{1} << *d)) {
      return absl::InvalidArgumentError(absl::StrCat("permute: dim ", dims[i], " repeats in ", shape_str(dims)));
    }
    seen |= uint64_t{1} << *d;
    shape[i] = shape_[*d];
    strides[i] = strides_[*d];
  }
  return with_layout(std::move(shape), std::move(strides), offset_);
}

absl::StatusOr<Tensor> Tensor::expand(Dims shape) const {
  if (!defined()) return undefined_error("expand");
  if (shape.size() < shape_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("expand: ", describe(), " cannot expand to fewer dims ",
                                                   shape_str(shape)));
  }
  const size_t lead = shape.size() - shape_.size();
  Shape out_shape(shape.size());
  Shape out_strides(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool is_new = i < lead;
    const int64_t have = is_new ? 1 : shape_[i - lead];
    const int64_t want = shape[i] == -1 && !is_new ? have : shape[i];
    if (want < 0 || (have != want && have != 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("expand: ", describe(), " cannot expand to ", shape_str(shape)));
    }
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

absl::StatusOr<Tensor> Tensor::squeeze(int64_t dim) const {
  if (!defined()) return undefined_error("squeeze");
  absl::StatusOr<int64_t> d = normalize_dim("squeeze", dim, this->dim());
  if (!d.ok()) return d.status();
  if (this->dim() == 0 || shape_[*d] != 1) return *this;
  Shape shape = shape_;
  Shape strides = strides_;
  shape.erase(shape.begin() + *d);
  strides.erase(strides.begin() + *d);
  return with_layout(std::move(shape), std::move(strides), offset_);
}

absl::StatusOr<Tensor> Tensor::unsqueeze(int64_t dim) const {
  if (!defined()) return undefined_error("unsqueeze");
  absl::StatusOr<int64_t> d = normalize_dim("unsqueeze", dim, this->dim() + 1);
  if (!d.ok()) return d.status();
  Shape shape = shape_;
  Shape strides = strides_;
  // The new dim's stride is whatever keeps the tensor contiguous if it was.
  const int64_t stride = *d < this->dim() ? strides_[*d] * shape_[*d] : 1;
  shape.insert(shape.begin() + *d, 1);
  strides.insert(strides.begin() + *d, stride);
  return with_layout(std::move(shape), std::move(strides), offset_);
}

}  // namespace ts
