// The loops behind every elementwise kernel (copy, fill, unary, binary,
// where). A functor maps one element's input values, in their Compute types,
// to its output value; launch_elementwise loads, applies and stores over a
// StridedLayout. When every tensor operand is flat and suitably aligned, a
// grid-stride loop moves chunks of kVec elements with one access per operand
// (16 bytes for the widest type); otherwise each element's operands are found
// through StridedLayout::offset. For .cu files only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "tensor/backend.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/kernel_utils.h"
#include "tensor/strided_layout.h"

namespace ts::cuda {

// An input of element type T: a tensor, or a scalar broadcast to every element.
template <typename T>
struct Input {
  const T* data;     // nullptr for a scalar
  Compute<T> value;  // the scalar's value

  static Input of(const Tensor& t) { return {static_cast<const T*>(t.raw_data()), Compute<T>{}}; }
  static Input of(const Operand& x) { return x.is_scalar() ? Input{nullptr, scalar_value<T>(x.scalar)} : of(x.tensor); }
  // A saved value a gradient does not read: the constant 0, never loaded.
  static Input of_optional(const Tensor& t) { return t.defined() ? of(t) : Input{nullptr, Compute<T>{}}; }

  // The value at element offset i (the scalar's value for a scalar).
  __device__ Compute<T> at(int64_t i) const { return data != nullptr ? load(data[i]) : value; }
};

// Functors for kernels that only move values: the conversion, if any,
// happens in load and store.
struct Identity {
  template <typename V>
  __device__ V operator()(V x) const {
    return x;
  }
};

template <typename V>
struct Constant {
  V value;
  __device__ V operator()() const { return value; }
};

// The unsigned integer of kBytes bytes, for kernels that move bits unchanged.
template <int kBytes>
using Bits =
    std::conditional_t<kBytes == 1, uint8_t,
                       std::conditional_t<kBytes == 2, uint16_t, std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;

namespace elementwise_internal {

// kVec elements moved by one memory access.
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Packed {
  T v[kVec];
};

// kVec values in registers.
template <typename V, int kVec>
struct Lanes {
  V v[kVec];
};

// Lanes of chunk [i, i + kVec) clipped to n: a full chunk in one access, the
// partial last one element by element (lanes past n keep unused values).
template <int kVec, typename T>
__device__ __forceinline__ Lanes<Compute<T>, kVec> load_lanes(const Input<T>& in, int64_t i, int64_t n) {
  Lanes<Compute<T>, kVec> lanes;
#pragma unroll
  for (int j = 0; j < kVec; ++j) lanes.v[j] = in.value;
  if (in.data == nullptr) return lanes;
  if (i + kVec <= n) {
    const Packed<T, kVec> packed = *reinterpret_cast<const Packed<T, kVec>*>(in.data + i);
#pragma unroll
    for (int j = 0; j < kVec; ++j) lanes.v[j] = load(packed.v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      if (i + j < n) lanes.v[j] = load(in.data[i + j]);
    }
  }
  return lanes;
}

template <int kVec, typename R, typename F, typename... V>
__device__ __forceinline__ void store_lanes(R* out, int64_t i, int64_t n, const F& f, const Lanes<V, kVec>&... in) {
  Packed<R, kVec> packed;
#pragma unroll
  for (int j = 0; j < kVec; ++j) packed.v[j] = store<R>(f(in.v[j]...));
  if (i + kVec <= n) {
    *reinterpret_cast<Packed<R, kVec>*>(out + i) = packed;
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      if (i + j < n) out[i + j] = packed.v[j];
    }
  }
}

// Every tensor operand flat and aligned for kVec-element accesses: thread t
// takes chunks t, t + stride, ... (the last one possibly partial). The
// functor is applied once per lane whatever the chunk, so its code appears
// kVec times, not more.
template <int kVec, typename R, typename F, typename... T>
__global__ void flat_kernel(int64_t n, R* out, F f, Input<T>... in) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t chunks = ceil_div(n, kVec);
  for (int64_t c = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; c < chunks; c += stride) {
    store_lanes<kVec>(out, c * kVec, n, f, load_lanes<kVec>(in, c * kVec, n)...);
  }
}

// Operand k + 1 of the layout is input K.
template <int N, typename R, typename F, typename... T, size_t... K>
__device__ __forceinline__ void strided_element(const StridedLayout<N>& layout, int64_t i, R* out, const F& f,
                                                std::index_sequence<K...>, const Input<T>&... in) {
  int64_t offsets[N];
  layout.offsets(i, offsets);
  out[offsets[0]] = store<R>(f(in.at(offsets[K + 1])...));
}

template <int N, typename R, typename F, typename... T>
__global__ void strided_kernel(StridedLayout<N> layout, R* out, F f, Input<T>... in) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < layout.numel; i += stride) {
    strided_element(layout, i, out, f, std::index_sequence_for<T...>{}, in...);
  }
}

// Scalars have no memory to walk, so only tensors need to be flat.
template <int N, typename... T, size_t... K>
bool tensors_flat(const StridedLayout<N>& layout, std::index_sequence<K...>, const Input<T>&... in) {
  return layout.flat(0) && ((in.data == nullptr || layout.flat(static_cast<int>(K) + 1)) && ...);
}

template <int kVec, typename T>
bool vector_aligned(const T* p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * kVec) == 0;
}

}  // namespace elementwise_internal

// out[i] = f(in[i]...) over `layout` (operand 0 is out, operand k + 1 is
// in[k]), enqueued on `stream` of `device`.
template <typename R, typename F, typename... T>
void launch_elementwise(int device, cudaStream_t stream, const StridedLayout<1 + sizeof...(T)>& layout, R* out, F f,
                        Input<T>... in) {
  namespace internal = elementwise_internal;
  const int64_t n = layout.numel;
  if (n == 0) return;
  // Elements per vector access: 16 bytes of the widest operand type.
  constexpr int kVec = static_cast<int>(16 / std::max({sizeof(R), sizeof(T)...}));
  // Misaligned flat operands (a view starting mid-vector) are rare enough to
  // take the strided loop, whose 1-D offsets cost one division per operand.
  if (internal::tensors_flat(layout, std::index_sequence_for<T...>{}, in...) && internal::vector_aligned<kVec>(out) &&
      (internal::vector_aligned<kVec>(in.data) && ...)) {
    internal::flat_kernel<kVec><<<grid_size(device, ceil_div(n, kVec)), kThreads, 0, stream>>>(n, out, f, in...);
  } else {
    internal::strided_kernel<<<grid_size(device, n), kThreads, 0, stream>>>(layout, out, f, in...);
  }
  TS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace ts::cuda
