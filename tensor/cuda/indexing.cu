// cat, index_select, gather and scatter_add over contiguous tensors.
//
// cat copies each input into its slot of the output (a strided view), so it
// runs on the copy kernels. The other three move elements between a tensor
// walked in order and an "indexed" tensor whose coordinate along `dim` comes
// from an index tensor. Both are described by one StridedLayout over the
// walked positions: the indexed tensor appears as a view with the walked
// shape and a zero stride along `dim` (giving the offset of every other
// coordinate), to which index * dim_stride is added.
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

template <typename T>
__device__ void atomic_add(T* address, T value) {
  if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: the unsigned sum has the signed sum's bits.
    atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value));
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    // No byte atomics: compare-and-swap the aligned word holding the byte.
    const uintptr_t at = reinterpret_cast<uintptr_t>(address);
    unsigned int* word = reinterpret_cast<unsigned int*>(at & ~uintptr_t{3});
    const unsigned int shift = (at & 3) * 8;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      const unsigned int sum = ((assumed >> shift) + value) & 0xFFu;
      old = atomicCAS(word, assumed, (assumed & ~(0xFFu << shift)) | (sum << shift));
    } while (old != assumed);
  } else {
    atomicAdd(address, value);
  }
}

// out[offset of the out view + index[p] * dim_stride] += src[p]; index and
// src are contiguous with the layout's shape.
template <typename T>
__global__ void scatter_add_kernel(StridedLayout<2> layout, T* out, const int64_t* index, const T* src,
                                   int64_t dim_stride) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t p = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; p < layout.numel; p += stride) {
    int64_t offsets[2];
    layout.offsets(p, offsets);
    atomic_add(out + offsets[1] + index[p] * dim_stride, src[p]);
  }
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
  const int device = out.device().index;
  DeviceGuard guard(device);
  const unsigned blocks = grid_size(device, layout.numel);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      no_kernel("cuda", "scatter_add", out.dtype());
    } else {
      scatter_add_kernel<<<blocks, kThreads, 0, current_stream(device)>>>(
          layout, static_cast<T*>(out.raw_data()), static_cast<const int64_t*>(index.raw_data()),
          static_cast<const T*>(src.raw_data()), target.dim_stride);
      TS_CUDA_CHECK(cudaGetLastError());
    }
  });
}

}  // namespace ts::cuda
