#include "nn/functional/cuda/cudnn_utils.h"

#include <limits>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/status_macros.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"
#include "tensor/precision.h"

namespace ts::nn::functional::cudnn {

cudnnHandle_t handle(int device) {
  // Never destroyed: worker threads live as long as the process, and
  // destroying handles during exit races with the driver's own teardown.
  thread_local std::vector<cudnnHandle_t> handles;
  throw_if_error(ts::cuda::check_device(device));
  if (static_cast<int>(handles.size()) <= device) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) {
    ts::cuda::DeviceGuard guard(device);
    TS_CUDA_CHECK(cudnnCreate(&handles[device]));
  }
  TS_CUDA_CHECK(cudnnSetStream(handles[device], ts::cuda::current_stream(device)));
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

cudnnMathType_t math_type(DType dtype) {
  if (is_reduced_float(dtype)) return CUDNN_TENSOR_OP_MATH;
  if (dtype == DType::kF32 && !allow_tf32()) return CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

int checked_int(int64_t v, const char* what) {
  TS_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), "cuDNN: ", what, " ", v,
           " does not fit the 32-bit int its descriptors hold (split the batch)");
  return static_cast<int>(v);
}

TensorDescriptor packed(DType dtype, const std::vector<int64_t>& dims, MemoryFormat format) {
  const int rank = static_cast<int>(dims.size());
  const Shape dense = dense_strides(dims, format);
  std::vector<int> sizes(rank), strides(rank);
  // cuDNN indexes its legacy descriptors' tensors in 32 bits (PyTorch
  // splits the batch for the same reason): every size and stride, and the
  // element count, must fit an int.
  int64_t numel = 1;
  for (int64_t size : dims) numel *= size;
  TS_CHECK(numel <= std::numeric_limits<int>::max(), "cuDNN: tensor ", shape_str(dims), " has ", numel,
           " elements, past the 32-bit indexing of its descriptors; split the batch");
  for (int i = 0; i < rank; ++i) {
    sizes[i] = static_cast<int>(dims[i]);
    strides[i] = static_cast<int>(dense[i]);
  }
  TensorDescriptor d;
  TS_CUDA_CHECK(cudnnSetTensorNdDescriptor(d.get(), data_type(dtype), rank, sizes.data(), strides.data()));
  return d;
}

Workspace::Workspace(int device, size_t bytes) : Workspace(value_or_throw(try_allocate(device, bytes))) {}

absl::StatusOr<Workspace> Workspace::try_allocate(int device, size_t bytes) {
  ASSIGN_OR_RETURN(void* ptr, ts::cuda::caching_allocator(device).allocate(bytes, ts::cuda::current_stream(device)));
  return Workspace(device, ptr, bytes);
}

Workspace::Workspace(Workspace&& other) noexcept
    : device_(other.device_), ptr_(std::exchange(other.ptr_, nullptr)), bytes_(other.bytes_) {}

Workspace::~Workspace() {
  if (ptr_ != nullptr) ts::cuda::caching_allocator(device_).deallocate(ptr_);
}

}  // namespace ts::nn::functional::cudnn
