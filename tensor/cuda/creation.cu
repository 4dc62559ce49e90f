// Filling tensors: constants, ranges and counter-based random numbers.
#include <cstring>

#include "tensor/cuda/check.h"
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/elementwise.h"
#include "tensor/cuda/stream.h"
#include "tensor/philox.h"

namespace ts::cuda {
namespace {

template <typename T>
__global__ void arange_kernel(int64_t n, T* out, double start, double step) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    // Unfused, as the CPU backend computes start + i * step.
    out[i] = store<T>(mul_add_unfused(static_cast<double>(i), step, start));
  }
}

// How random values become elements; V is the type a Philox group's values
// come in (double for f64, float for the rest).
template <typename V>
struct RandomArgs {
  RandomKind kind;
  int bits;        // significant bits of each uniform (f32/f16/bf16)
  V scale, shift;  // uniform: high - low, low; normal: stddev, mean
  double p;        // Bernoulli probability when there is no probs tensor
  V high;          // uniform: a draw that rounds up to it becomes low
};

// One thread per Philox group, mapped to elements exactly as the CPU loop
// maps them: four per group for 32-bit-computed dtypes, two for f64.
template <typename T>
__global__ void random_kernel(int64_t n, T* out, const T* probs, PhiloxKey key,
                              RandomArgs<std::conditional_t<std::is_same_v<T, double>, double, float>> args) {
  using V = decltype(args.scale);
  constexpr int kPerGroup = std::is_same_v<T, double> ? 2 : 4;
  const int64_t groups = ceil_div(n, kPerGroup);
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t g = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; g < groups; g += stride) {
    const Philox4 w = philox_group(key, static_cast<uint64_t>(g));
    V v[kPerGroup];
    if constexpr (std::is_same_v<T, double>) {
      if (args.kind == RandomKind::kNormal)
        normal2_f64(w, v);
      else
        uniform2_f64(w, v);
    } else {
      if (args.kind == RandomKind::kNormal)
        normal4(w, v);
      else
        uniform4(w, args.bits, v);
    }
    for (int j = 0; j < kPerGroup && g * kPerGroup + j < n; ++j) {
      const int64_t i = g * kPerGroup + j;
      V r;
      if (args.kind == RandomKind::kBernoulli) {
        // Compared in double, like the CPU, so u < p has probability exactly p.
        r = static_cast<double>(v[j]) < (probs != nullptr ? static_cast<double>(load(probs[i])) : args.p) ? V(1) : V(0);
      } else {
        r = mul_add_unfused(args.scale, v[j], args.shift);
      }
      out[i] = store<T>(r);
      // [low, high), as PyTorch's CUDA kernel keeps it: a draw that rounded
      // up to high becomes low.
      if (args.kind == RandomKind::kUniform && load(out[i]) == load(store<T>(args.high))) out[i] = store<T>(args.shift);
    }
  }
}

}  // namespace

void CudaBackend::fill(const Tensor& out, const Scalar& value) {
  const auto layout = make_layout<1>({&out});
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The value is converted on the host, exactly as the CPU backend converts
    // it, and the kernel only writes its bits: one kernel per element size.
    using B = Bits<sizeof(T)>;
    const HostType<T> v = value.to<HostType<T>>();
    B bits;
    std::memcpy(&bits, &v, sizeof(B));
    launch_elementwise(device, stream, layout, static_cast<B*>(out.raw_data()), Constant<B>{bits});
  });
}

void CudaBackend::arange(const Tensor& out, double start, double step) {
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const unsigned blocks = grid_size(device, out.numel());
    arange_kernel<<<blocks, kThreads, 0, stream>>>(out.numel(), static_cast<T*>(out.raw_data()), start, step);
    TS_CUDA_CHECK(cudaGetLastError());
  });
}

void CudaBackend::random(RandomKind kind, const Tensor& out, PhiloxKey key, double a, double b, const Tensor& probs) {
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      no_kernel("cuda", "random", out.dtype());
    } else {
      using V = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const int bits = kind == RandomKind::kBernoulli     ? 24
                       : std::is_same_v<T, __half>        ? 11
                       : std::is_same_v<T, __nv_bfloat16> ? 8
                                                          : 24;
      const bool normal = kind == RandomKind::kNormal;
      const RandomArgs<V> args{kind, bits, static_cast<V>(normal ? b : b - a), static_cast<V>(a), a, static_cast<V>(b)};
      const int64_t n = out.numel();
      const unsigned blocks = grid_size(device, ceil_div(n, std::is_same_v<T, double> ? 2 : 4));
      random_kernel<<<blocks, kThreads, 0, stream>>>(
          n, static_cast<T*>(out.raw_data()), probs.defined() ? static_cast<const T*>(probs.raw_data()) : nullptr, key,
          args);
      TS_CUDA_CHECK(cudaGetLastError());
    }
  });
}

}  // namespace ts::cuda
