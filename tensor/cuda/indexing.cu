// cat, index_select, gather and scatter_add over contiguous tensors.
//
// cat copies each input into its slot of the output (a strided view), so it
// runs on the copy kernels. The other three move elements between a tensor
// walked in order and an "indexed" tensor whose coordinate along `dim` comes
// from an index tensor. Both are described by one StridedLayout over the
// walked positions: the indexed tensor appears as a view with the walked
// shape and a zero stride along `dim` (giving the offset of every other
// coordinate), to which index * dim_stride is added.
//
// scatter_add adds without atomics, so that it gives the same bits every run
// (it is the embedding's backward; atomics would make a GPU training run
// unrepeatable): the walked positions are sorted by the element they add to
// (a stable radix sort), and one thread per target element adds its sources
// in position order, as the CPU loop does, with the same result to the bit.
// PyTorch's embedding backward sorts the same way.
#include <cub/device/device_radix_sort.cuh>

#include "tensor/cuda/check.h"
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/elementwise.h"
#include "tensor/cuda/kernel_utils.h"
#include "tensor/cuda/stream.h"
#include "tensor/strided_layout.h"

namespace ts::cuda {
namespace {

struct IndexedView {
  Tensor view;
  int64_t dim_stride;
};

// `t` seen with `shape` (no larger than t's outside `dim`) and `dim` left out.
IndexedView indexed_view(const Tensor& t, Dims shape, int64_t dim) {
  if (t.dim() == 0) return {t, 0};  // one element, which every index (0) names
  Shape strides = t.strides();
  const int64_t dim_stride = strides[dim];
  strides[dim] = 0;
  return {Tensor(t.storage(), Shape(shape.begin(), shape.end()), strides, t.offset(), t.dtype()), dim_stride};
}

// out (contiguous, so layout position p is out[p]) gathers
// in[offset of the in view + index[offset of the index view] * dim_stride].
template <typename T>
__global__ void index_copy_kernel(StridedLayout<3> layout, T* out, const int64_t* index, const T* in,
                                  int64_t dim_stride) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t p = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; p < layout.numel; p += stride) {
    int64_t offsets[3];
    layout.offsets(p, offsets);
    out[p] = in[offsets[2] + index[offsets[1]] * dim_stride];
  }
}

// Runs index_copy_kernel over out's positions; elements move by size.
void launch_index_copy(const Tensor& out, const Tensor& index_view, const Tensor& in, int64_t dim) {
  const IndexedView source = indexed_view(in, out.shape(), dim);
  const auto layout = make_layout<3>({&out, &index_view, &source.view});
  const int device = out.device().index;
  DeviceGuard guard(device);
  const unsigned blocks = grid_size(device, layout.numel);
  visit_dtype(out.dtype(), [&](auto tag) {
    using B = Bits<sizeof(typename decltype(tag)::type)>;
    index_copy_kernel<<<blocks, kThreads, 0, current_stream(device)>>>(
        layout, static_cast<B*>(out.raw_data()), static_cast<const int64_t*>(index_view.raw_data()),
        static_cast<const B*>(in.raw_data()), source.dim_stride);
    TS_CUDA_CHECK(cudaGetLastError());
  });
}

// The element of out each walked position adds to (an offset from out's
// first element), and the position itself, for sorting.
__global__ void scatter_targets_kernel(StridedLayout<2> layout, const int64_t* index, int64_t dim_stride,
                                       uint64_t* targets, int64_t* positions) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t p = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; p < layout.numel; p += stride) {
    int64_t offsets[2];
    layout.offsets(p, offsets);
    targets[p] = static_cast<uint64_t>(offsets[1] + index[p] * dim_stride);
    positions[p] = p;
  }
}

// Over the sorted targets: the first thread of each run of equal targets
// adds the run's sources into that element, in position order.
template <typename T>
__global__ void scatter_add_runs_kernel(int64_t n, const uint64_t* targets, const int64_t* positions, const T* src,
                                        T* out) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint64_t target = targets[i];
    if (i > 0 && targets[i - 1] == target) continue;
    T sum = out[target];
    for (int64_t j = i; j < n && targets[j] == target; ++j) sum = static_cast<T>(sum + src[positions[j]]);
    out[target] = sum;
  }
}

// Bits that hold every offset into `t` (contiguous or not, strides >= 0).
int offset_bits(const Tensor& t) {
  uint64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) last += static_cast<uint64_t>((t.shape()[d] - 1) * t.strides()[d]);
  int bits = 1;
  while (bits < 64 && (last >> bits) != 0) ++bits;
  return bits;
}

}  // namespace

void CudaBackend::cat(absl::Span<const Tensor> inputs, int64_t dim, const Tensor& out) {
  int64_t position = 0;  // along dim, where the next input starts
  for (const Tensor& in : inputs) {
    const int64_t size = in.size(dim);
    if (in.numel() > 0) {
      Tensor slot = out.narrow(dim, position, size);
      copy(in, slot);
    }
    position += size;
  }
}

void CudaBackend::index_select(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) {
  // The 1-D index broadcast over out's shape, stepping along dim only.
  Shape strides(out.dim(), 0);
  strides[dim] = 1;
  const Tensor index_view(index.storage(), out.shape(), strides, index.offset(), index.dtype());
  launch_index_copy(out, index_view, in, dim);
}

void CudaBackend::gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) {
  launch_index_copy(out, index, in, dim);
}

void CudaBackend::scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  const IndexedView target = indexed_view(out, index.shape(), dim);
  const auto layout = make_layout<2>({&index, &target.view});
  const int64_t n = layout.numel;
  const int device = out.device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = current_stream(device);
  const auto scratch_i64 = [&](int64_t count) { return Tensor::allocate({count}, DType::kI64, out.device()); };
  const Tensor targets = scratch_i64(n), positions = scratch_i64(n);
  const Tensor sorted_targets = scratch_i64(n), sorted_positions = scratch_i64(n);
  const auto u64 = [](const Tensor& t) { return static_cast<uint64_t*>(t.raw_data()); };
  const auto i64 = [](const Tensor& t) { return static_cast<int64_t*>(t.raw_data()); };
  const unsigned blocks = grid_size(device, n);
  scatter_targets_kernel<<<blocks, kThreads, 0, stream>>>(layout, static_cast<const int64_t*>(index.raw_data()),
                                                          target.dim_stride, u64(targets), i64(positions));
  TS_CUDA_CHECK(cudaGetLastError());
  // The radix sort is stable: equal targets keep their positions' order.
  const int end_bit = offset_bits(out);
  size_t scratch_bytes = 0;
  TS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratch_bytes, u64(targets), u64(sorted_targets),
                                                i64(positions), i64(sorted_positions), n, 0, end_bit, stream));
  const Tensor scratch = Tensor::allocate({static_cast<int64_t>(scratch_bytes)}, DType::kU8, out.device());
  TS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.raw_data(), scratch_bytes, u64(targets), u64(sorted_targets),
                                                i64(positions), i64(sorted_positions), n, 0, end_bit, stream));
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || is_half_v<T>) {
      // The op adds f16/bf16 in f32 (and refuses bool) before it gets here.
      no_kernel("cuda", "scatter_add", out.dtype());
    } else {
      scatter_add_runs_kernel<<<blocks, kThreads, 0, stream>>>(n, u64(sorted_targets), i64(sorted_positions),
                                                               static_cast<const T*>(src.raw_data()),
                                                               static_cast<T*>(out.raw_data()));
      TS_CUDA_CHECK(cudaGetLastError());
    }
  });
}

}  // namespace ts::cuda
