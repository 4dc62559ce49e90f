// The fused SGD kernel and its launcher, on the multi-tensor machinery of
// multi_tensor.h.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "base/error.h"
#include "optim/cuda/fused_sgd.h"
#include "optim/cuda/multi_tensor.h"
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
  constexpr const char* kOp = "fused_sgd_step";
  check_param(kOp, index, u.param, first_param);
  check_operand(kOp, index, "grad", u.grad, u.param);
  if (u.options.momentum != 0) check_operand(kOp, index, "momentum buffer", u.momentum_buffer, u.param);
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
  table.run(updates[0].param.dtype(), updates[0].param.device(), "fused_sgd_step",
            [](auto tag, const TensorEntry* tensors, const ChunkTask* tasks, unsigned blocks, cudaStream_t stream) {
              fused_sgd_kernel<decltype(tag)><<<blocks, kThreads, 0, stream>>>(tensors, tasks);
            });
}

}  // namespace ts::optim::cuda
