// The multi-tensor machinery of the fused optimizer steps (fused_sgd.cu,
// fused_adam.cu), after apex's and PyTorch's multi_tensor_apply. Per-tensor
// metadata lives in device memory rather than in kernel arguments (PyTorch
// packs it into the 4 KiB argument space and launches again when full), so
// any number of tensors takes one launch; the table is a few bytes per
// tensor and rides on the stream's own host-to-device copy, with no
// synchronization. Each block takes one (tensor, chunk) task. CUDA code:
// included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace ts::optim::cuda {

// A block takes one chunk of one tensor: small enough that a model of a few
// hundred thousand parameters (ResNet-20) still spreads over many SMs, large
// enough that per-block setup is noise. Each thread keeps kIlp elements in
// flight per iteration to hide memory latency.
inline constexpr int kThreads = 512;
inline constexpr int64_t kChunk = 16384;
inline constexpr int kIlp = 4;

struct ChunkTask {
  int32_t tensor;
  int32_t chunk;
};

// The arithmetic type of a parameter type: float for the 16-bit floats.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
__device__ __forceinline__ Compute<T> load(T x) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(x);
  else
    return x;
}

template <typename T>
__device__ __forceinline__ T store(Compute<T> v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return v;
}

// Calls fn(T{}) with T the CUDA element type of a floating dtype.
template <typename Fn>
void visit_cuda_float(DType dtype, const char* op, Fn fn) {
  switch (dtype) {
    case DType::kF32:
      return fn(float{});
    case DType::kF64:
      return fn(double{});
    case DType::kF16:
      return fn(__half{});
    case DType::kBF16:
      return fn(__nv_bfloat16{});
    default:
      throw_error(absl::StatusCode::kInternal, op, ": not a floating dtype");  // callers check first
  }
}

// Throws, naming `op` and update `index`, unless `param` is a defined,
// contiguous floating-point CUDA tensor on update 0's device and of its
// dtype (`first`): one launch takes one device and dtype.
inline void check_param(const char* op, size_t index, const Tensor& param, const Tensor& first) {
  TS_CHECK(param.defined(), op, ": update ", index, ": undefined param");
  TS_CHECK(param.device().is_cuda(), op, ": update ", index, ": param is ", param.describe(), ", not on CUDA");
  TS_CHECK(is_floating(param.dtype()), op, ": update ", index, ": param is ", param.describe(), ", not floating");
  TS_CHECK(param.device() == first.device() && param.dtype() == first.dtype(), op, ": update ", index, ": param is ",
           param.describe(), " but update 0's is ", first.describe(), "; one launch takes one device and dtype");
  TS_CHECK(param.is_contiguous(), op, ": update ", index, ": param ", param.describe(), " is not contiguous");
}

// Throws unless `t` (the update's `name`: grad, a state buffer) is a
// contiguous tensor of param's shape, dtype and device.
inline void check_operand(const char* op, size_t index, const char* name, const Tensor& t, const Tensor& param) {
  TS_CHECK(t.defined() && t.shape() == param.shape() && t.dtype() == param.dtype() && t.device() == param.device() &&
               t.is_contiguous(),
           op, ": update ", index, ": ", name, " ", t.defined() ? t.describe() : "undefined",
           " is not a contiguous match of param ", param.describe());
}

// The tensor table and its chunk tasks, built on the host.
template <typename Entry>
struct TaskTable {
  std::vector<Entry> tensors;
  std::vector<ChunkTask> tasks;

  // Adds a tensor of `numel` elements (none for an empty one); `op` names
  // the caller in errors.
  void add(const Entry& entry, int64_t numel, const char* op) {
    if (numel == 0) return;
    const int64_t chunks = (numel + kChunk - 1) / kChunk;
    TS_CHECK(tensors.size() < INT32_MAX && chunks <= INT32_MAX && tasks.size() + chunks <= INT32_MAX, op,
             ": too many tensors or elements for one launch");
    for (int64_t c = 0; c < chunks; ++c) {
      tasks.push_back({static_cast<int32_t>(tensors.size()), static_cast<int32_t>(c)});
    }
    tensors.push_back(entry);
  }

  // One device buffer: the tensor table, then the tasks (Entry's alignment,
  // 8, suits ChunkTask too). Allocated and filled on the current stream, so
  // the kernel queued after it reads it in order, and its memory goes back
  // to the stream's pool only for work queued later.
  Tensor upload(Device device) const {
    static_assert(alignof(Entry) % alignof(ChunkTask) == 0 && sizeof(Entry) % alignof(ChunkTask) == 0);
    const size_t tensor_bytes = tensors.size() * sizeof(Entry);
    std::vector<uint8_t> host(tensor_bytes + tasks.size() * sizeof(ChunkTask));
    std::memcpy(host.data(), tensors.data(), tensor_bytes);
    std::memcpy(host.data() + tensor_bytes, tasks.data(), tasks.size() * sizeof(ChunkTask));
    return from_vector<uint8_t>(host, {static_cast<int64_t>(host.size())}, device);
  }

  // Uploads the table to `device` and calls
  // launch(T{}, tensors, tasks, blocks, stream) with T the element type of
  // `dtype`, for the caller to launch its kernel<T> there, one block per
  // task; a failed launch throws, naming `op`.
  template <typename Launch>
  void run(DType dtype, Device device, const char* op, Launch launch) const {
    if (tasks.empty()) return;
    ts::cuda::DeviceGuard guard(device.index);
    const Tensor uploaded = upload(device);
    const auto* table = static_cast<const Entry*>(uploaded.raw_data());
    const auto* task_list = reinterpret_cast<const ChunkTask*>(table + tensors.size());
    visit_cuda_float(dtype, op, [&](auto tag) {
      launch(tag, table, task_list, static_cast<unsigned>(tasks.size()), ts::cuda::current_stream(device.index));
    });
    TS_CUDA_CHECK(cudaGetLastError());
  }
};

}  // namespace ts::optim::cuda
