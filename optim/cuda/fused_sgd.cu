// The fused SGD kernel and its launcher, on the multi-tensor machinery of
// multi_tensor.h.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "base/error.h"
#include "optim/cuda/fused_sgd.h"
#include "optim/cuda/multi_tensor.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"
#include "tensor/ops.h"

namespace ts::optim::cuda {
namespace {

struct TensorEntry {
  void* param;
  const void* grad;
  void* buf;  // null without momentum
  int64_t numel;
  SgdOptions options;
  int32_t first;
};

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

}  // namespace

void fused_sgd_step(absl::Span<const SgdUpdate> updates) {
  if (updates.empty()) return;
  for (size_t i = 0; i < updates.size(); ++i) check_update(updates[i], i, updates[0].param);

  TaskTable<TensorEntry> table;
  for (const SgdUpdate& u : updates) {
    const bool momentum = u.options.momentum != 0;
    table.add({u.param.raw_data(), u.grad.raw_data(), momentum ? u.momentum_buffer.raw_data() : nullptr,
               u.param.numel(), u.options, u.first ? 1 : 0},
              u.param.numel(), "fused_sgd_step");
  }
  if (table.tasks.empty()) return;
  const Device device = updates[0].param.device();
  ts::cuda::DeviceGuard guard(device.index);
  const Tensor uploaded = table.upload(device);
  const auto* tensors = static_cast<const TensorEntry*>(uploaded.raw_data());
  const auto* tasks = reinterpret_cast<const ChunkTask*>(tensors + table.tensors.size());
  visit_cuda_float(updates[0].param.dtype(), "fused_sgd_step", [&](auto tag) {
    using T = decltype(tag);
    fused_sgd_kernel<T>
        <<<static_cast<unsigned>(table.tasks.size()), kThreads, 0, ts::cuda::current_stream(device.index)>>>(tensors,
                                                                                                             tasks);
  });
  TS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace ts::optim::cuda
