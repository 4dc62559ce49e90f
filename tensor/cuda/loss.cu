// The fused cross-entropy kernels (ts::cross_entropy_rows): lanes of a block
// share a row for its maximum, sum of exponentials and (with label
// smoothing) weighted sum of logits; the gradient is elementwise from the
// saved log-sum-exp. f16/bf16/f32 accumulate in float, f64 in double. A
// target outside [0, C) that is not ignore_index makes its row NaN: checking
// it on the host would stall the host on the device every step.
#include <algorithm>
#include <cmath>

#include "tensor/cuda/block_reduce.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/kernel_utils.h"
#include "tensor/cuda/stream.h"
#include "tensor/functors.h"

namespace ts::cuda {
namespace {

// What both kernels read besides the logits; A is the accumulation type,
// which is also the weights' (f32, or f64 for f64 logits).
template <typename A>
struct Classes {
  int64_t count;
  const int64_t* target;
  const A* weight;      // null: all ones
  const A* weight_sum;  // null: count (unweighted) or no smoothing
  int64_t ignore_index;
  A smoothing;

  __device__ A w(int64_t c) const { return weight != nullptr ? weight[c] : A(1); }
  __device__ A total_weight() const { return weight_sum != nullptr ? *weight_sum : A(count); }
};

template <typename T, typename A>
__global__ void __launch_bounds__(kMaxRowThreads)
    cross_entropy_kernel(const T* logits, Classes<A> k, int64_t rows, A* loss, A* row_weight, A* logsumexp) {
  __shared__ A scratch[kMaxRowThreads / 32];
  const int64_t c = k.count;
  const int64_t row_blocks = ceil_div(rows, blockDim.y);
  for (int64_t block = blockIdx.x; block < row_blocks; block += gridDim.x) {
    const int64_t r = block * blockDim.y + threadIdx.y;
    // Threads past the last row still take part in the block's combines.
    const int64_t end = r < rows ? c : 0;
    const T* x = logits + r * c;
    A max_value = functors::lowest<A>();
    for (int64_t j = threadIdx.x; j < end; j += blockDim.x) {
      max_value = functors::Maximum{}(max_value, static_cast<A>(load(x[j])));
    }
    max_value = combine_across_lanes(max_value, blockDim.x, scratch, functors::Maximum{});
    A total = 0, weighted_x = 0;
    for (int64_t j = threadIdx.x; j < end; j += blockDim.x) {
      const A v = static_cast<A>(load(x[j]));
      total += functors::fm::exp(v - max_value);
      if (k.smoothing > A(0)) weighted_x += k.w(j) * v;
    }
    total = combine_across_lanes(total, blockDim.x, scratch, PlusCombine{});
    if (k.smoothing > A(0)) weighted_x = combine_across_lanes(weighted_x, blockDim.x, scratch, PlusCombine{});
    if (r >= rows || threadIdx.x != 0) continue;
    const A lse = max_value + functors::fm::log(total);
    logsumexp[r] = lse;
    const int64_t t = k.target[r];
    if (t == k.ignore_index) {
      loss[r] = A(0);
      row_weight[r] = A(0);
      continue;
    }
    if (t < 0 || t >= c) {
      loss[r] = A(NAN);
      row_weight[r] = A(NAN);
      continue;
    }
    const A wt = k.w(t);
    A value = (A(1) - k.smoothing) * wt * (lse - static_cast<A>(load(x[t])));
    if (k.smoothing > A(0)) value += k.smoothing / A(c) * (k.total_weight() * lse - weighted_x);
    loss[r] = value;
    row_weight[r] = wt;
  }
}

// d/dx_j of w_t (lse - x_t) is w_t (p_j - [j == t]); of sum_c w_c (lse - x_c)
// it is W p_j - w_j.
template <typename T, typename A>
__global__ void cross_entropy_grad_kernel(const A* grad, const T* logits, Classes<A> k, const A* logsumexp,
                                          int64_t rows, T* out) {
  const int64_t c = k.count;
  const int64_t n = rows * c;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t r = i / c, j = i - r * c;
    const int64_t t = k.target[r];
    if (t == k.ignore_index) {
      out[i] = store<T>(A(0));
      continue;
    }
    if (t < 0 || t >= c) {
      out[i] = store<T>(A(NAN));
      continue;
    }
    const A p = functors::fm::exp(static_cast<A>(load(logits[i])) - logsumexp[r]);
    A d = (A(1) - k.smoothing) * k.w(t) * (p - (j == t ? A(1) : A(0)));
    if (k.smoothing > A(0)) d += k.smoothing / A(c) * (k.total_weight() * p - k.w(j));
    out[i] = store<T>(grad[r] * d);
  }
}

template <typename A>
Classes<A> classes_of(const Tensor& logits, const Tensor& target, const Tensor& weight, const Tensor& weight_sum,
                      int64_t ignore_index, double smoothing) {
  return Classes<A>{logits.size(1),
                    static_cast<const int64_t*>(target.raw_data()),
                    weight.defined() ? static_cast<const A*>(weight.raw_data()) : nullptr,
                    weight_sum.defined() ? static_cast<const A*>(weight_sum.raw_data()) : nullptr,
                    ignore_index,
                    static_cast<A>(smoothing)};
}

}  // namespace

void CudaBackend::cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight,
                                const Tensor& weight_sum, int64_t ignore_index, double label_smoothing,
                                const Tensor& loss, const Tensor& row_weight, const Tensor& logsumexp) {
  const int device = logits.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      no_kernel("cuda", "cross_entropy", logits.dtype());
    } else {
      using A = ReduceAcc<T>;
      const int64_t rows = logits.size(0), classes = logits.size(1);
      const dim3 block = row_block(classes);
      const unsigned blocks = grid_size(device, ceil_div(rows, block.y) * block.x * block.y, block.x * block.y);
      cross_entropy_kernel<<<blocks, block, 0, stream>>>(
          static_cast<const T*>(logits.raw_data()),
          classes_of<A>(logits, target, weight, weight_sum, ignore_index, label_smoothing), rows,
          static_cast<A*>(loss.raw_data()), static_cast<A*>(row_weight.raw_data()),
          static_cast<A*>(logsumexp.raw_data()));
      TS_CUDA_CHECK(cudaGetLastError());
    }
  });
}

void CudaBackend::cross_entropy_grad(const Tensor& grad, const Tensor& logits, const Tensor& target,
                                     const Tensor& weight, const Tensor& weight_sum, const Tensor& logsumexp,
                                     int64_t ignore_index, double label_smoothing, const Tensor& out) {
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(logits.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      no_kernel("cuda", "cross_entropy backward", logits.dtype());
    } else {
      using A = ReduceAcc<T>;
      cross_entropy_grad_kernel<<<grid_size(device, out.numel()), kThreads, 0, stream>>>(
          static_cast<const A*>(grad.raw_data()), static_cast<const T*>(logits.raw_data()),
          classes_of<A>(logits, target, weight, weight_sum, ignore_index, label_smoothing),
          static_cast<const A*>(logsumexp.raw_data()), logits.size(0), static_cast<T*>(out.raw_data()));
      TS_CUDA_CHECK(cudaGetLastError());
    }
  });
}

}  // namespace ts::cuda
