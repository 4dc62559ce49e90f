// The fused Adam/AdamW kernel and its launcher, on the multi-tensor machinery
// of multi_tensor.h.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "base/error.h"
#include "optim/cuda/fused_adam.h"
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
  const Tensor& p = u.param;
  const char* what = "fused_adam_step: update ";
  TS_CHECK(p.defined() && u.grad.defined(), what, index, ": undefined param or grad");
  TS_CHECK(p.device().is_cuda(), what, index, ": param is ", p.describe(), ", not on CUDA");
  TS_CHECK(is_floating(p.dtype()), what, index, ": param is ", p.describe(), ", not floating");
  TS_CHECK(p.device() == first_param.device() && p.dtype() == first_param.dtype(), what, index, ": param is ",
           p.describe(), " but update 0's is ", first_param.describe(), "; one launch takes one device and dtype");
  TS_CHECK(p.is_contiguous(), what, index, ": param ", p.describe(), " is not contiguous");
  const auto check_matches = [&](const Tensor& t, const char* name) {
    TS_CHECK(t.defined() && t.shape() == p.shape() && t.dtype() == p.dtype() && t.device() == p.device() &&
                 t.is_contiguous(),
             what, index, ": ", name, " ", t.defined() ? t.describe() : "undefined",
             " is not a contiguous match of param ", p.describe());
  };
  check_matches(u.grad, "grad");
  check_matches(u.exp_avg, "exp_avg");
  check_matches(u.exp_avg_sq, "exp_avg_sq");
  if (u.options.amsgrad) check_matches(u.max_exp_avg_sq, "max_exp_avg_sq");
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
  if (table.tasks.empty()) return;
  const Device device = updates[0].param.device();
  ts::cuda::DeviceGuard guard(device.index);
  const Tensor uploaded = table.upload(device);
  const auto* tensors = static_cast<const TensorEntry*>(uploaded.raw_data());
  const auto* tasks = reinterpret_cast<const ChunkTask*>(tensors + table.tensors.size());
  visit_cuda_float(updates[0].param.dtype(), "fused_adam_step", [&](auto tag) {
    using T = decltype(tag);
    fused_adam_kernel<T>
        <<<static_cast<unsigned>(table.tasks.size()), kThreads, 0, ts::cuda::current_stream(device.index)>>>(tensors,
                                                                                                             tasks);
  });
  TS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace ts::optim::cuda
