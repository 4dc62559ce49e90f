// The fused Adam/AdamW kernel and its launcher, on the multi-tensor machinery
// of multi_tensor.h.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "base/error.h"
#include "optim/cuda/fused_adam.h"
#include "optim/cuda/multi_tensor.h"
#include "tensor/ops.h"

namespace ts::optim::cuda {
namespace {

struct TensorEntry {
  void* param;
  const void* grad;
  void* exp_avg;
  void* exp_avg_sq;
  void* max_exp_avg_sq;  // null without amsgrad
  int64_t numel;
  AdamOptions options;
  AdamStepScalars scalars;
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    fused_adam_kernel(const TensorEntry* __restrict__ tensors, const ChunkTask* __restrict__ tasks) {
  using C = Compute<T>;
  const ChunkTask task = tasks[blockIdx.x];
  const TensorEntry& e = tensors[task.tensor];
  const AdamCoefficients<C> k(e.options, e.scalars);
  T* __restrict__ p = static_cast<T*>(e.param);
  const T* __restrict__ g = static_cast<const T*>(e.grad);
  T* __restrict__ m = static_cast<T*>(e.exp_avg);
  T* __restrict__ v = static_cast<T*>(e.exp_avg_sq);
  T* __restrict__ v_max = static_cast<T*>(e.max_exp_avg_sq);
  const int64_t begin = int64_t{task.chunk} * kChunk;
  const int64_t end = begin + kChunk < e.numel ? begin + kChunk : e.numel;

  for (int64_t base = begin + threadIdx.x; base < end; base += int64_t{kThreads} * kIlp) {
    C pv[kIlp], gv[kIlp], mv[kIlp], vv[kIlp], xv[kIlp];
#pragma unroll
    for (int j = 0; j < kIlp; ++j) {
      const int64_t i = base + int64_t{j} * kThreads;
      if (i < end) {
        pv[j] = load(p[i]);
        gv[j] = load(g[i]);
        mv[j] = load(m[i]);
        vv[j] = load(v[i]);
        xv[j] = v_max != nullptr ? load(v_max[i]) : C(0);
      }
    }
#pragma unroll
    for (int j = 0; j < kIlp; ++j) {
      const int64_t i = base + int64_t{j} * kThreads;
      if (i < end) {
        p[i] = store<T>(adam_element(pv[j], gv[j], mv[j], vv[j], xv[j], k));
        m[i] = store<T>(mv[j]);
        v[i] = store<T>(vv[j]);
        if (v_max != nullptr) v_max[i] = store<T>(xv[j]);
      }
    }
  }
}

void check_update(const AdamUpdate& u, size_t index, const Tensor& first_param) {
  constexpr const char* kOp = "fused_adam_step";
  check_param(kOp, index, u.param, first_param);
  check_operand(kOp, index, "grad", u.grad, u.param);
  check_operand(kOp, index, "exp_avg", u.exp_avg, u.param);
  check_operand(kOp, index, "exp_avg_sq", u.exp_avg_sq, u.param);
  if (u.options.amsgrad) check_operand(kOp, index, "max_exp_avg_sq", u.max_exp_avg_sq, u.param);
}

}  // namespace

void fused_adam_step(absl::Span<const AdamUpdate> updates) {
  if (updates.empty()) return;
  for (size_t i = 0; i < updates.size(); ++i) check_update(updates[i], i, updates[0].param);

  TaskTable<TensorEntry> table;
  for (const AdamUpdate& u : updates) {
    table.add({u.param.raw_data(), u.grad.raw_data(), u.exp_avg.raw_data(), u.exp_avg_sq.raw_data(),
               u.options.amsgrad ? u.max_exp_avg_sq.raw_data() : nullptr, u.param.numel(), u.options, u.scalars},
              u.param.numel(), "fused_adam_step");
  }
  table.run(updates[0].param.dtype(), updates[0].param.device(), "fused_adam_step",
            [](auto tag, const TensorEntry* tensors, const ChunkTask* tasks, unsigned blocks, cudaStream_t stream) {
              fused_adam_kernel<decltype(tag)><<<blocks, kThreads, 0, stream>>>(tensors, tasks);
            });
}

}  // namespace ts::optim::cuda
