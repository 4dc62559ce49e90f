// The fused SGD kernel and its launcher. Per-tensor metadata lives in device
// memory rather than in kernel arguments (PyTorch packs it into the 4 KiB
// argument space and launches again when full), so any number of tensors
// takes one launch; the table is a few bytes per tensor and rides on the
// stream's own host-to-device copy, with no synchronization.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "optim/cuda/fused_sgd.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"
#include "tensor/ops.h"

namespace ts::optim::cuda {
namespace {

// A block takes one chunk of one tensor: small enough that a model of a few
// hundred thousand parameters (ResNet-20) still spreads over many SMs, large
// enough that per-block setup is noise. Each thread keeps kIlp elements in
// flight per iteration to hide memory latency.
constexpr int kThreads = 512;
constexpr int64_t kChunk = 16384;
constexpr int kIlp = 4;

struct TensorEntry {
  void* param;
  const void* grad;
  void* buf;  // null without momentum
  int64_t numel;
  SgdOptions options;
  int32_t first;
};

struct ChunkTask {
  int32_t tensor;
  int32_t chunk;
};

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

template <typename T>
__global__ void __launch_bounds__(kThreads)
    fused_sgd_kernel(const TensorEntry* __restrict__ tensors, const ChunkTask* __restrict__ tasks) {
  using C = Compute<T>;
  const ChunkTask task = tasks[blockIdx.x];
  const TensorEntry& e = tensors[task.tensor];
  const SgdCoefficients<C> k(e.options);
  T* __restrict__ p = static_cast<T*>(e.param);
  const T* __restrict__ g = static_cast<const T*>(e.grad);
  T* __restrict__ b = static_cast<T*>(e.buf);
  const bool first = e.first != 0;
  const bool read_buf = b != nullptr && !first;
  const int64_t begin = int64_t{task.chunk} * kChunk;
  const int64_t end = begin + kChunk < e.numel ? begin + kChunk : e.numel;

  for (int64_t base = begin + threadIdx.x; base < end; base += int64_t{kThreads} * kIlp) {
    C pv[kIlp], gv[kIlp], bv[kIlp];
#pragma unroll
    for (int j = 0; j < kIlp; ++j) {
      const int64_t i = base + int64_t{j} * kThreads;
      if (i < end) {
        pv[j] = load(p[i]);
        gv[j] = load(g[i]);
        bv[j] = read_buf ? load(b[i]) : C(0);
      }
    }
#pragma unroll
    for (int j = 0; j < kIlp; ++j) {
      const int64_t i = base + int64_t{j} * kThreads;
      if (i < end) {
        p[i] = store<T>(sgd_element(pv[j], gv[j], bv[j], first, k));
        if (b != nullptr) b[i] = store<T>(bv[j]);
      }
    }
  }
}

void check_update(const SgdUpdate& u, size_t index, const Tensor& first_param) {
  const Tensor& p = u.param;
  const char* what = "fused_sgd_step: update ";
  TS_CHECK(p.defined() && u.grad.defined(), what, index, ": undefined param or grad");
  TS_CHECK(p.device().is_cuda(), what, index, ": param is ", p.describe(), ", not on CUDA");
  TS_CHECK(is_floating(p.dtype()), what, index, ": param is ", p.describe(), ", not floating");
  TS_CHECK(p.device() == first_param.device() && p.dtype() == first_param.dtype(), what, index, ": param is ",
           p.describe(), " but update 0's is ", first_param.describe(), "; one launch takes one device and dtype");
  const auto matches = [&](const Tensor& t) {
    return t.shape() == p.shape() && t.dtype() == p.dtype() && t.device() == p.device() && t.is_contiguous();
  };
  TS_CHECK(p.is_contiguous(), what, index, ": param ", p.describe(), " is not contiguous");
  TS_CHECK(matches(u.grad), what, index, ": grad ", u.grad.describe(), " is not a contiguous match of param ",
           p.describe());
  TS_CHECK(u.options.momentum == 0 || (u.momentum_buffer.defined() && matches(u.momentum_buffer)), what, index,
           ": momentum buffer ", u.momentum_buffer.defined() ? u.momentum_buffer.describe() : "undefined",
           " is not a contiguous match of param ", p.describe());
}

template <typename T>
void launch(const void* table, int64_t num_tensors, int64_t num_tasks, int device) {
  const auto* tensors = static_cast<const TensorEntry*>(table);
  const auto* tasks = reinterpret_cast<const ChunkTask*>(tensors + num_tensors);
  fused_sgd_kernel<T>
      <<<static_cast<unsigned>(num_tasks), kThreads, 0, ts::cuda::current_stream(device)>>>(tensors, tasks);
  TS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void fused_sgd_step(absl::Span<const SgdUpdate> updates) {
  if (updates.empty()) return;
  for (size_t i = 0; i < updates.size(); ++i) check_update(updates[i], i, updates[0].param);

  std::vector<TensorEntry> tensors;
  std::vector<ChunkTask> tasks;
  for (const SgdUpdate& u : updates) {
    const int64_t n = u.param.numel();
    if (n == 0) continue;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    TS_CHECK(tensors.size() < INT32_MAX && chunks <= INT32_MAX,
             "fused_sgd_step: too many tensors or elements for one launch");
    const bool momentum = u.options.momentum != 0;
    for (int64_t c = 0; c < chunks; ++c) {
      tasks.push_back({static_cast<int32_t>(tensors.size()), static_cast<int32_t>(c)});
    }
    tensors.push_back({u.param.raw_data(), u.grad.raw_data(), momentum ? u.momentum_buffer.raw_data() : nullptr, n,
                       u.options, u.first ? 1 : 0});
  }
  if (tasks.empty()) return;
  TS_CHECK(tasks.size() <= INT32_MAX, "fused_sgd_step: too many chunks for one launch");

  // One buffer: the tensor table, then the tasks (TensorEntry's alignment,
  // 8, suits ChunkTask too).
  const size_t tensor_bytes = tensors.size() * sizeof(TensorEntry);
  std::vector<uint8_t> host(tensor_bytes + tasks.size() * sizeof(ChunkTask));
  std::memcpy(host.data(), tensors.data(), tensor_bytes);
  std::memcpy(host.data() + tensor_bytes, tasks.data(), tasks.size() * sizeof(ChunkTask));
  const Device device = updates[0].param.device();
  ts::cuda::DeviceGuard guard(device.index);
  // Allocated and filled on the current stream, so the kernel queued after
  // it reads it in order, and its memory goes back to the stream's pool only
  // for work queued later.
  const Tensor table = from_vector<uint8_t>(host, {static_cast<int64_t>(host.size())}, device);

  const int64_t num_tensors = static_cast<int64_t>(tensors.size());
  const int64_t num_tasks = static_cast<int64_t>(tasks.size());
  switch (updates[0].param.dtype()) {
    case DType::kF32:
      return launch<float>(table.raw_data(), num_tensors, num_tasks, device.index);
    case DType::kF64:
      return launch<double>(table.raw_data(), num_tensors, num_tasks, device.index);
    case DType::kF16:
      return launch<__half>(table.raw_data(), num_tensors, num_tasks, device.index);
    case DType::kBF16:
      return launch<__nv_bfloat16>(table.raw_data(), num_tensors, num_tasks, device.index);
    default:
      throw_error(absl::StatusCode::kInternal, "fused_sgd_step: unreachable dtype");  // checked above
  }
}

}  // namespace ts::optim::cuda
