// Tensor: a strided view (shape, strides, offset, dtype) of shared storage on
// one device. Copying a Tensor copies the view, not the data. The view methods
// here only rewrite metadata and never copy; ops that compute or copy are free
// functions (and operators) in tensor/ops.h. Misuse - a bad dim, a shape
// that does not fit - throws ts::Error naming the method and the tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tensor/device.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace ts {

class Tensor {
 public:
  Tensor() = default;  // undefined: holds no storage
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype);

  // A fresh dense tensor with uninitialized contents, row-major unless
  // `format` asks for channels-last.
  static Tensor allocate(Dims shape, DType dtype, Device device, MemoryFormat format = MemoryFormat::kContiguous);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  // Size and stride of one dim; negative dims count from the end.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const { return numel_; }
  DType dtype() const { return dtype_; }
  int64_t itemsize() const { return dtype_size(dtype_); }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  int64_t offset() const { return offset_; }  // in elements, into the storage
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  bool is_contiguous() const;
  // Whether the elements are dense in `format`'s order (a tensor with size-1
  // channels or spatial dims can be both).
  bool is_contiguous(MemoryFormat format) const;
  // The layout a result computed from this tensor should take: channels-last
  // when it is dense in that order and not also row-major, or, dense in both
  // (a size-1 channel or spatial extent), when it has exactly the strides
  // that a channels-last tensor of its shape is made with; else contiguous
  // (PyTorch's suggest_memory_format).
  MemoryFormat suggest_memory_format() const;
  // Whether two tensors view (any part of) the same storage.
  bool shares_storage_with(const Tensor& other) const { return storage_ && storage_ == other.storage_; }

  // Address of the first element (nullptr for an empty tensor).
  void* raw_data() const;
  // Typed address of the first element; T must match dtype().
  template <typename T>
  T* data() const {
    check_element_type(dtype_of<T>);
    return static_cast<T*>(raw_data());
  }

  // "f32[2, 3] on cuda:0"
  std::string describe() const;

  // ---- Views: share storage, never copy. ----
  // New shape with the same number of elements; one size may be -1. Throws
  // when the strides cannot express it (use ts::reshape, which copies then).
  Tensor view(Dims shape) const;
  // The same, or nullopt when the strides cannot express the shape (a shape
  // of another element count still throws).
  std::optional<Tensor> try_view(Dims shape) const;
  // Python-style slice of one dim: negative start/end count from the end,
  // both clamp to the dim's range; step must be positive.
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  // `length` elements of `dim` from `start`; out-of-range is an error.
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  // Index `index` of `dim`, which is removed.
  Tensor select(int64_t dim, int64_t index) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(Dims dims) const;
  // Broadcasts size-1 dims (and new leading dims) to `shape` with stride 0;
  // -1 keeps a dim's size.
  Tensor expand(Dims shape) const;
  Tensor squeeze() const;             // drops every size-1 dim
  Tensor squeeze(int64_t dim) const;  // no-op unless size 1
  Tensor unsqueeze(int64_t dim) const;

 private:
  void check_element_type(DType requested) const;
  Tensor with_layout(Shape shape, Shape strides, int64_t offset) const;

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 0;
  DType dtype_ = DType::kF32;
};

}  // namespace ts
