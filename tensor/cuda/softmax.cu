// Softmax and log-softmax along the middle axis of a contiguous [outer, dim,
// inner] input, as the CPU computes them: the maximum is subtracted before
// exponentiating, then the sum of exponentials normalizes. f16/bf16/f32
// compute in float, f64 in double.
#include <algorithm>

#include "tensor/cuda/block_reduce.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/kernel_utils.h"
#include "tensor/cuda/stream.h"
#include "tensor/functors.h"

namespace ts::cuda {
namespace {

template <typename A>
__device__ __forceinline__ A softmax_value(A shifted, A total, A log_total, bool log) {
  return log ? shifted - log_total : functors::fm::exp(shifted) / total;
}

// inner == 1: blockDim.x threads share each row (blockDim.y rows per block),
// making three passes over it: the maximum, the sum of exponentials, the
// outputs. Row blocks are walked grid-stride.
template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
    softmax_rows_kernel(const T* in, T* out, int64_t rows, int64_t dim, bool log) {
  using A = ReduceAcc<T>;
  __shared__ A scratch[kMaxRowThreads / 32];
  const int64_t row_blocks = ceil_div(rows, blockDim.y);
  for (int64_t block = blockIdx.x; block < row_blocks; block += gridDim.x) {
    const int64_t row = block * blockDim.y + threadIdx.y;
    // Threads past the last row still take part in the block's combines.
    const int64_t end = row < rows ? dim : 0;
    const T* x = in + row * dim;
    T* y = out + row * dim;
    A max_value = functors::lowest<A>();
    for (int64_t j = threadIdx.x; j < end; j += blockDim.x) {
      max_value = functors::Maximum{}(max_value, static_cast<A>(load(x[j])));
    }
    max_value = combine_across_lanes(max_value, blockDim.x, scratch, functors::Maximum{});
    A total = 0;
    for (int64_t j = threadIdx.x; j < end; j += blockDim.x) {
      total += functors::fm::exp(static_cast<A>(load(x[j])) - max_value);
    }
    total = combine_across_lanes(total, blockDim.x, scratch, PlusCombine{});
    const A log_total = functors::fm::log(total);
    for (int64_t j = threadIdx.x; j < end; j += blockDim.x) {
      y[j] = store<T>(softmax_value(static_cast<A>(load(x[j])) - max_value, total, log_total, log));
    }
  }
}

// inner > 1: one thread per (outer, inner) position; neighbouring threads
// read neighbouring elements of each line along dim.
template <typename T>
__global__ void softmax_columns_kernel(const T* in, T* out, int64_t outer, int64_t dim, int64_t inner, bool log) {
  using A = ReduceAcc<T>;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t c = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; c < outer * inner; c += stride) {
    const int64_t base = c / inner * dim * inner + c % inner;
    const T* x = in + base;
    T* y = out + base;
    A max_value = functors::lowest<A>();
    for (int64_t j = 0; j < dim; ++j) max_value = functors::Maximum{}(max_value, static_cast<A>(load(x[j * inner])));
    A total = 0;
    for (int64_t j = 0; j < dim; ++j) total += functors::fm::exp(static_cast<A>(load(x[j * inner])) - max_value);
    const A log_total = functors::fm::log(total);
    for (int64_t j = 0; j < dim; ++j) {
      y[j * inner] = store<T>(softmax_value(static_cast<A>(load(x[j * inner])) - max_value, total, log_total, log));
    }
  }
}

}  // namespace

void CudaBackend::softmax(const Tensor& in, ReduceGeometry g, bool log, const Tensor& out) {
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      no_kernel("cuda", "softmax", in.dtype());
    } else {
      const T* x = static_cast<const T*>(in.raw_data());
      T* y = static_cast<T*>(out.raw_data());
      if (g.inner == 1) {
        const dim3 block = row_block(g.reduced);
        const unsigned blocks = grid_size(device, ceil_div(g.outer, block.y) * block.x * block.y, block.x * block.y);
        softmax_rows_kernel<<<blocks, block, 0, stream>>>(x, y, g.outer, g.reduced, log);
      } else {
        const unsigned blocks = grid_size(device, g.outer * g.inner);
        softmax_columns_kernel<<<blocks, kThreads, 0, stream>>>(x, y, g.outer, g.reduced, g.inner, log);
      }
      TS_CUDA_CHECK(cudaGetLastError());
    }
  });
}

}  // namespace ts::cuda
