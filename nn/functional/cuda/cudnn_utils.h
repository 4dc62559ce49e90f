// cuDNN plumbing for the layer kernels: a handle per thread and device bound
// to the current stream, owning descriptor wrappers, dtype mapping, and
// workspace from the caching allocator. Failed cuDNN calls throw ts::Error
// (TS_CUDA_CHECK).
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tensor/cuda/cudnn_check.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace ts::nn::functional::cudnn {

// The calling thread's handle for `device` (a handle must not be used by two
// threads at once), set to the device's current stream.
cudnnHandle_t handle(int device);

cudnnDataType_t data_type(DType dtype);

// PyTorch's choice: tensor cores for f16/bf16; for f32 only when TF32 is
// allowed (CUDNN_FMA_MATH rules them out).
cudnnMathType_t math_type(DType dtype);

// Blend factors alpha = 1, beta = 0 in the type cuDNN reads for `dtype`
// (double for f64 data, float otherwise).
struct Scaling {
  explicit Scaling(DType dtype) : is_double(dtype == DType::kF64) {}
  const void* one() const { return is_double ? static_cast<const void*>(&one_d) : &one_f; }
  const void* zero() const { return is_double ? static_cast<const void*>(&zero_d) : &zero_f; }
  bool is_double;
  double one_d = 1, zero_d = 0;
  float one_f = 1, zero_f = 0;
};

// An owned cuDNN descriptor, created by the constructor.
template <typename T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class Descriptor {
 public:
  Descriptor() { TS_CUDA_CHECK(Create(&desc_)); }
  Descriptor(Descriptor&& other) noexcept : desc_(other.desc_) { other.desc_ = nullptr; }
  Descriptor& operator=(Descriptor&&) = delete;
  Descriptor(const Descriptor&) = delete;
  ~Descriptor() {
    if (desc_ != nullptr) CHECK_CUDA(Destroy(desc_));
  }
  T get() const { return desc_; }

 private:
  T desc_ = nullptr;
};

using TensorDescriptor = Descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor = Descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    Descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using ActivationDescriptor =
    Descriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor>;

// v as the int cuDNN's descriptors hold; past INT_MAX an error naming
// `what` (cuDNN would read a wrapped size or stride, so the wrong memory).
int checked_int(int64_t v, const char* what);

// A dense tensor descriptor of any rank from 3 up (RNN states [D, B, H],
// NCHW, NCDHW, ...), row-major or (4 and 5 dims) channels-last: cuDNN reads
// the layout from the strides. More than INT_MAX elements is an error.
TensorDescriptor packed(DType dtype, const std::vector<int64_t>& dims, MemoryFormat format = MemoryFormat::kContiguous);

// Device memory from the caching allocator on the current stream, returned
// when this goes out of scope (after the work using it was enqueued, which
// the allocator's stream ordering makes safe).
class Workspace {
 public:
  // Throws when the device has no room.
  Workspace(int device, size_t bytes);
  // Or the allocator's error: kResourceExhausted when the device has no room
  // even after the cache was released, for callers with a smaller choice.
  static absl::StatusOr<Workspace> try_allocate(int device, size_t bytes);
  Workspace(Workspace&& other) noexcept;
  Workspace& operator=(Workspace&&) = delete;
  Workspace(const Workspace&) = delete;
  ~Workspace();
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  Workspace(int device, void* ptr, size_t bytes) : device_(device), ptr_(ptr), bytes_(bytes) {}

  int device_;
  void* ptr_;
  size_t bytes_;
};

}  // namespace ts::nn::functional::cudnn
