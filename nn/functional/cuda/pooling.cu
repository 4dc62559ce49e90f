// CUDA pooling: one thread per result element (grid-stride), taken in the
// result's memory order, so neighbouring threads write neighbouring elements
// and, channels-last, read neighbouring channels. The backwards gather: each
// input element sums, in f32 (f64 for f64 data), what it receives from the
// outputs whose windows hold it (max pooling: those whose maximum it is;
// average pooling: each one's share, gradient / divisor), in a fixed order,
// and is written once in its own dtype, as PyTorch's kernels do. No
// atomics, no buffer: the same sum every run.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "base/error.h"
#include "nn/functional/cuda/cuda_kernels.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"

namespace ts::nn::functional {
namespace {

template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
__device__ __forceinline__ Acc<T> load(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

template <typename T>
__device__ __forceinline__ T store(Acc<T> v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return v;
  }
}

#define TS_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{gridDim.x} * blockDim.x)

template <typename T>
__global__ void max_forward(Pool2dGeometry g, PoolDividers by, const T* x, T* out, int32_t* indices) {
  TS_GRID_STRIDE(o, g.planes * g.out_h * g.out_w) {
    const PoolElement at = pool_element_at(g, by.channels, by.out_plane, o);
    const int64_t oh = by.out_w.div(at.pixel);
    const PoolWindow win = pool_window(g, oh, at.pixel - oh * g.out_w);
    const PoolPlane in = pool_plane(g, by.channels, at.plane, g.h, g.w);
    int64_t best_at = win.h0 * g.w + win.w0;
    Acc<T> best = -INFINITY;
    for (int64_t ih = win.h0; ih < win.h1; ++ih) {
      for (int64_t iw = win.w0; iw < win.w1; ++iw) {
        const Acc<T> v = load(x[in.at(ih * g.w + iw)]);
        if (v > best || ::isnan(v)) {  // the last NaN wins, as on the CPU
          best = v;
          best_at = ih * g.w + iw;
        }
      }
    }
    out[o] = x[in.at(best_at)];
    indices[o] = static_cast<int32_t>(best_at);
  }
}

template <typename T>
__global__ void max_backward(Pool2dGeometry g, PoolDividers by, const T* grad_out, const int32_t* indices, T* grad_x) {
  TS_GRID_STRIDE(i, g.planes * g.h * g.w) {
    const PoolElement at = pool_element_at(g, by.channels, by.plane, i);
    const int64_t ih = by.w.div(at.pixel);
    const PoolCover rows = pool_cover(ih, g.kh, by.stride_h, g.pad_h, g.out_h);
    const PoolCover cols = pool_cover(at.pixel - ih * g.w, g.kw, by.stride_w, g.pad_w, g.out_w);
    const PoolPlane out = pool_plane(g, by.channels, at.plane, g.out_h, g.out_w);
    Acc<T> sum = 0;
    for (int64_t oh = rows.begin; oh < rows.end; ++oh) {
      for (int64_t ow = cols.begin; ow < cols.end; ++ow) {
        const int64_t o = out.at(oh * g.out_w + ow);
        if (indices[o] == at.pixel) sum += load(grad_out[o]);
      }
    }
    grad_x[i] = store<T>(sum);
  }
}

template <typename T>
__global__ void avg_forward(Pool2dGeometry g, PoolDividers by, const T* x, T* out) {
  TS_GRID_STRIDE(o, g.planes * g.out_h * g.out_w) {
    const PoolElement at = pool_element_at(g, by.channels, by.out_plane, o);
    const int64_t oh = by.out_w.div(at.pixel);
    const PoolWindow win = pool_window(g, oh, at.pixel - oh * g.out_w);
    const PoolPlane in = pool_plane(g, by.channels, at.plane, g.h, g.w);
    Acc<T> sum = 0;
    for (int64_t ih = win.h0; ih < win.h1; ++ih) {
      for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += load(x[in.at(ih * g.w + iw)]);
    }
    out[o] = store<T>(sum / static_cast<Acc<T>>(win.divisor));
  }
}

template <typename T>
__global__ void avg_backward(Pool2dGeometry g, PoolDividers by, const T* grad_out, T* grad_x) {
  TS_GRID_STRIDE(i, g.planes * g.h * g.w) {
    const PoolElement at = pool_element_at(g, by.channels, by.plane, i);
    const int64_t ih = by.w.div(at.pixel);
    const int64_t iw = at.pixel - ih * g.w;
    const PoolCover rows =
        g.adaptive ? adaptive_pool_cover(ih, g.h, g.out_h) : pool_cover(ih, g.kh, by.stride_h, g.pad_h, g.out_h);
    const PoolCover cols =
        g.adaptive ? adaptive_pool_cover(iw, g.w, g.out_w) : pool_cover(iw, g.kw, by.stride_w, g.pad_w, g.out_w);
    const PoolPlane out = pool_plane(g, by.channels, at.plane, g.out_h, g.out_w);
    Acc<T> sum = 0;
    for (int64_t oh = rows.begin; oh < rows.end; ++oh) {
      for (int64_t ow = cols.begin; ow < cols.end; ++ow) {
        const Acc<T> divisor = static_cast<Acc<T>>(pool_window(g, oh, ow).divisor);
        sum += load(grad_out[out.at(oh * g.out_w + ow)]) / divisor;
      }
    }
    grad_x[i] = store<T>(sum);
  }
}

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

// Calls f(T{}) with the kernel element type of `dtype`.
template <typename F>
void visit_float(DType dtype, F f) {
  switch (dtype) {
    case DType::kF16:
      return f(__half{});
    case DType::kBF16:
      return f(__nv_bfloat16{});
    case DType::kF32:
      return f(float{});
    case DType::kF64:
      return f(double{});
    default:
      throw_error(absl::StatusCode::kInternal, "pooling: no CUDA kernel for ", dtype_name(dtype));
  }
}

}  // namespace

void CudaKernels::max_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out,
                                     const Tensor& indices) const {
  visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ts::cuda::DeviceGuard guard(x.device().index);
    max_forward<T><<<blocks_for(out.numel()), kThreads, 0, ts::cuda::current_stream(x.device().index)>>>(
        g, PoolDividers(g), static_cast<const T*>(x.raw_data()), static_cast<T*>(out.raw_data()),
        indices.data<int32_t>());
    TS_CUDA_CHECK(cudaGetLastError());
  });
}

void CudaKernels::max_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& indices,
                                      const Tensor& grad_x) const {
  visit_float(grad_x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ts::cuda::DeviceGuard guard(grad_x.device().index);
    max_backward<T><<<blocks_for(grad_x.numel()), kThreads, 0, ts::cuda::current_stream(grad_x.device().index)>>>(
        g, PoolDividers(g), static_cast<const T*>(grad_out.raw_data()), indices.data<int32_t>(),
        static_cast<T*>(grad_x.raw_data()));
    TS_CUDA_CHECK(cudaGetLastError());
  });
}

void CudaKernels::avg_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out) const {
  visit_float(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ts::cuda::DeviceGuard guard(x.device().index);
    avg_forward<T><<<blocks_for(out.numel()), kThreads, 0, ts::cuda::current_stream(x.device().index)>>>(
        g, PoolDividers(g), static_cast<const T*>(x.raw_data()), static_cast<T*>(out.raw_data()));
    TS_CUDA_CHECK(cudaGetLastError());
  });
}

void CudaKernels::avg_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& grad_x) const {
  visit_float(grad_x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ts::cuda::DeviceGuard guard(grad_x.device().index);
    avg_backward<T><<<blocks_for(grad_x.numel()), kThreads, 0, ts::cuda::current_stream(grad_x.device().index)>>>(
        g, PoolDividers(g), static_cast<const T*>(grad_out.raw_data()), static_cast<T*>(grad_x.raw_data()));
    TS_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace ts::nn::functional
