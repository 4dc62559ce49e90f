// The fused scale-convert-check kernel and its launcher, on the multi-tensor
// machinery of multi_tensor.h.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "optim/cuda/multi_tensor.h"
#include "optim/cuda/scaled_copy.h"

namespace ts::optim::cuda {
namespace {

// The destination's element type; the source's is the kernel's T.
enum ToType : int32_t { kSameAsFrom, kToF32, kToF16, kToBF16 };

struct TensorEntry {
  const void* from;
  void* to;
  int64_t numel;
  int32_t to_type;  // a ToType, the same for every element of the tensor
};

// Writes v into to[i] in its type and returns what was stored, read back:
// a value that overflows a 16-bit type is caught as the inf it became.
template <typename T>
__device__ __forceinline__ Compute<T> store_as(int32_t to_type, void* to, int64_t i, Compute<T> v) {
  switch (to_type) {
    case kToF32: {
      const float f = static_cast<float>(v);
      static_cast<float*>(to)[i] = f;
      return f;
    }
    case kToF16: {
      const __half h = __float2half_rn(static_cast<float>(v));
      static_cast<__half*>(to)[i] = h;
      return __half2float(h);
    }
    case kToBF16: {
      const __nv_bfloat16 b = __float2bfloat16_rn(static_cast<float>(v));
      static_cast<__nv_bfloat16*>(to)[i] = b;
      return __bfloat162float(b);
    }
    default: {
      const T r = store<T>(v);
      static_cast<T*>(to)[i] = r;
      return load(r);
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    scale_kernel(const TensorEntry* __restrict__ tensors, const ChunkTask* __restrict__ tasks, Compute<T> factor,
                 int32_t* __restrict__ found) {
  using C = Compute<T>;
  const ChunkTask task = tasks[blockIdx.x];
  const TensorEntry& e = tensors[task.tensor];
  // Not __restrict__: an in-place unscale (f32 gradients) writes `to`, the
  // same memory.
  const T* from = static_cast<const T*>(e.from);
  const int64_t begin = int64_t{task.chunk} * kChunk;
  const int64_t end = begin + kChunk < e.numel ? begin + kChunk : e.numel;
  bool bad = false;
  for (int64_t base = begin + threadIdx.x; base < end; base += int64_t{kThreads} * kIlp) {
    C v[kIlp];
#pragma unroll
    for (int j = 0; j < kIlp; ++j) {
      const int64_t i = base + int64_t{j} * kThreads;
      if (i < end) v[j] = load(from[i]) * factor;
    }
#pragma unroll
    for (int j = 0; j < kIlp; ++j) {
      const int64_t i = base + int64_t{j} * kThreads;
      if (i < end) bad = !isfinite(store_as<T>(e.to_type, e.to, i, v[j])) || bad;
    }
  }
  // Any thread that saw one writes the flag; racing writers all write 1.
  if (bad && found != nullptr) *found = 1;
}

int32_t to_type(DType from, DType to) {
  if (to == from) return kSameAsFrom;
  switch (to) {
    case DType::kF32:
      return kToF32;
    case DType::kF16:
      return kToF16;
    case DType::kBF16:
      return kToBF16;
    default:
      throw_error(absl::StatusCode::kInternal, "scale_into: no conversion from ", dtype_name(from), " to ",
                  dtype_name(to));  // callers check first
  }
}

}  // namespace

void scale_into(absl::Span<const Tensor> from, absl::Span<const Tensor> to, double factor,
                const Tensor& found_non_finite) {
  if (from.empty()) return;
  TaskTable<TensorEntry> table;
  for (size_t i = 0; i < from.size(); ++i) {
    table.add({from[i].raw_data(), to[i].raw_data(), from[i].numel(), to_type(from[i].dtype(), to[i].dtype())},
              from[i].numel(), "scale_into");
  }
  auto* found = found_non_finite.defined() ? static_cast<int32_t*>(found_non_finite.raw_data()) : nullptr;
  table.run(from[0].dtype(), from[0].device(), "scale_into",
            [&](auto tag, const TensorEntry* tensors, const ChunkTask* tasks, unsigned blocks, cudaStream_t stream) {
              using T = decltype(tag);
              scale_kernel<T><<<blocks, kThreads, 0, stream>>>(tensors, tasks, static_cast<Compute<T>>(factor), found);
            });
}

}  // namespace ts::optim::cuda
