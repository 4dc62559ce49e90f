#include "nn/functional/cuda/cudnn_utils.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"
#include "tensor/status_macros.h"

namespace ts::nn::functional::cudnn {

absl::StatusOr<cudnnHandle_t> handle(int device) {
  // Never destroyed: worker threads live as long as the process, and
  // destroying handles during exit races with the driver's own teardown.
  thread_local std::vector<cudnnHandle_t> handles;
  RETURN_IF_ERROR(ts::cuda::check_device(device));
  if (static_cast<int>(handles.size()) <= device) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) {
    ts::cuda::DeviceGuard guard(device);
    RETURN_IF_CUDA_ERROR(cudnnCreate(&handles[device]));
  }
  RETURN_IF_CUDA_ERROR(cudnnSetStream(handles[device], ts::cuda::current_stream(device)));
  return handles[device];
}

cudnnDataType_t data_type(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return CUDNN_DATA_HALF;
    case DType::kBF16:
      return CUDNN_DATA_BFLOAT16;
    case DType::kF64:
      return CUDNN_DATA_DOUBLE;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

absl::StatusOr<TensorDescriptor> nchw(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
  ASSIGN_OR_RETURN(TensorDescriptor d, TensorDescriptor::create());
  RETURN_IF_CUDA_ERROR(cudnnSetTensor4dDescriptor(d.get(), CUDNN_TENSOR_NCHW, data_type(dtype),
                                                  static_cast<int>(n), static_cast<int>(c),
                                                  static_cast<int>(h), static_cast<int>(w)));
  return d;
}

absl::StatusOr<Workspace> Workspace::allocate(int device, size_t bytes) {
  ASSIGN_OR_RETURN(void* ptr,
                   ts::cuda::caching_allocator(device).allocate(bytes, ts::cuda::current_stream(device)));
  return Workspace(device, ptr, bytes);
}

Workspace::Workspace(Workspace&& other) noexcept
    : device_(other.device_), ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = nullptr;
}

Workspace::~Workspace() {
  if (ptr_ != nullptr) ts::cuda::caching_allocator(device_).deallocate(ptr_);
}

}  // namespace ts::nn::functional::cudnn
