// Reductions over the middle axis of a contiguous [outer, reduced, inner]
// input, with the reducers of functors.h.
//
// One kernel serves every geometry. Each output, a "column" (one outer and
// inner position), is reduced by a group of `lanes` threads striding along the
// reduced axis, whose partial accumulators are then combined. For inner == 1
// the lanes run along x, so a warp reads a row contiguously and combines
// through shuffles; for inner > 1, x runs across columns (contiguous along
// inner, so reads coalesce) and the lanes along y combine in shared memory.
// When the columns alone cannot fill the device, the reduced axis is split
// across gridDim.y blocks as well: those write partial accumulators to a
// scratch buffer laid out [columns, splits], and a second launch of the same
// kernel reduces that as rows (inner == 1) and finalizes.
//
// Accumulators are only ever merged through Reducer::combine, so structs
// (ArgExtremum's value and index, Welford's moments) work as well as numbers.
#include <algorithm>
#include <climits>

#include "tensor/cuda/block_reduce.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/cuda_backend.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/kernel_utils.h"
#include "tensor/cuda/stream.h"
#include "tensor/functors.h"

namespace ts::cuda {
namespace {

constexpr int kMaxThreads = 512;
// Independent accumulators per thread, so that many loads are in flight.
constexpr int kUnroll = 4;
// Elements each lane should reduce before more lanes or splits are worth it.
constexpr int64_t kPerLane = 8;
constexpr int64_t kPerLaneBeforeSplit = 32;

struct ReduceShape {
  int64_t columns;  // outer * inner: one output each
  int64_t reduced;
  int64_t inner;
};

// Input elements, transformed into accumulators.
template <typename T>
struct ElementSource {
  using Value = T;
  const T* data;

  template <typename Reducer>
  __device__ typename Reducer::Acc lift(const Reducer& r, T x, int64_t j) const {
    return r.transform(static_cast<ReduceAcc<T>>(load(x)), j);
  }
};

// A first pass's partial accumulators, combined as they are.
template <typename Acc>
struct PartialSource {
  using Value = Acc;
  const Acc* data;

  template <typename Reducer>
  __device__ Acc lift(const Reducer&, Acc x, int64_t) const {
    return x;
  }
};

// Combines positions j = first, first + step, ... below `end` of the column
// whose element j sits at base + j * stride.
template <typename Source, typename Reducer>
__device__ typename Reducer::Acc accumulate(const Source& src, const Reducer& r, int64_t base, int64_t stride,
                                            int64_t first, int64_t end, int step) {
  using Acc = typename Reducer::Acc;
  Acc acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = r.identity();
  int64_t j = first;
  for (; j + (kUnroll - 1) * step < end; j += kUnroll * step) {
    typename Source::Value v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src.data[base + (j + u * step) * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] = r.combine(acc[u], src.lift(r, v[u], j + u * step));
  }
  for (; j < end; j += step) acc[0] = r.combine(acc[0], src.lift(r, src.data[base + j * stride], j));
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) acc[0] = r.combine(acc[0], acc[u]);
  return acc[0];
}

// Combines across threadIdx.y (blockDim.y a power of two) through shared
// memory; thread y == 0 ends with the total. Every thread must call it.
template <typename Acc, typename Reducer>
__device__ Acc combine_down_y(Acc value, Acc* scratch, const Reducer& r) {
  Acc* mine = scratch + threadIdx.y * blockDim.x + threadIdx.x;
  *mine = value;
  __syncthreads();
  for (int half = blockDim.y / 2; half > 0; half /= 2) {
    if (threadIdx.y < half) {
      value = r.combine(value, mine[half * blockDim.x]);
      *mine = value;
    }
    __syncthreads();
  }
  return value;
}

// Block (x, y) threads; `lanes_on_x` says which of the two shares a column.
// Column blocks are walked grid-stride along x; blockIdx.y picks this block's
// share of the reduced axis. With one share the result is finalized into
// `out`, otherwise the partial accumulator goes to partial[column][share].
template <typename Source, typename Reducer, typename R>
__global__ void __launch_bounds__(kMaxThreads)
    reduce_kernel(Source src, Reducer r, ReduceShape shape, bool lanes_on_x, R* out, typename Reducer::Acc* partial) {
  using Acc = typename Reducer::Acc;
  __shared__ Acc scratch[kMaxThreads];
  const int lanes = lanes_on_x ? blockDim.x : blockDim.y;
  const int lane = lanes_on_x ? threadIdx.x : threadIdx.y;
  const int width = lanes_on_x ? blockDim.y : blockDim.x;  // columns per block
  const int slot = lanes_on_x ? threadIdx.y : threadIdx.x;
  const int64_t share = ceil_div(shape.reduced, gridDim.y);
  const int64_t begin = blockIdx.y * share;
  const int64_t end = begin + share < shape.reduced ? begin + share : shape.reduced;
  const int64_t column_blocks = ceil_div(shape.columns, width);
  for (int64_t block = blockIdx.x; block < column_blocks; block += gridDim.x) {
    const int64_t c = block * width + slot;
    const bool valid = c < shape.columns;
    // Column c is (o, i) = (c / inner, c % inner); its element j is at
    // o * reduced * inner + j * inner + i.
    const int64_t base = valid ? c / shape.inner * shape.reduced * shape.inner + c % shape.inner : 0;
    Acc acc = accumulate(src, r, base, shape.inner, begin + lane, valid ? end : begin, lanes);
    if (lanes_on_x) {
      acc = combine_across_lanes(acc, lanes, scratch, [&](const Acc& a, const Acc& b) { return r.combine(a, b); });
    } else {
      acc = combine_down_y(acc, scratch, r);
    }
    if (lane == 0 && valid) {
      if (gridDim.y == 1) {
        out[c] = store<R>(r.finalize(acc));
      } else {
        partial[c * gridDim.y + blockIdx.y] = acc;
      }
    }
  }
}

// Smallest power of two >= n, at least 1 and at most `cap` (a power of two).
int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < n && p < cap) p *= 2;
  return p;
}

struct Plan {
  bool lanes_on_x;
  dim3 block;
  unsigned column_grid;  // gridDim.x
  unsigned splits;       // gridDim.y
};

// `resident` is how many threads the device holds at once.
Plan plan(const ReduceShape& shape, int64_t resident, bool allow_split) {
  Plan p;
  int lanes, width;
  if (shape.inner == 1) {
    p.lanes_on_x = true;
    lanes = pow2_at_least(ceil_div(shape.reduced, kPerLane), kMaxThreads);
    width = std::max(1, 256 / lanes);
    p.block = dim3(lanes, width);
  } else {
    // Up to a warp of columns, so that reads coalesce along inner; lanes
    // take the rest of a 256-thread block, and columns again what short
    // columns leave.
    p.lanes_on_x = false;
    width = pow2_at_least(shape.columns, 32);
    lanes = pow2_at_least(ceil_div(shape.reduced, kPerLane), 256 / width);
    width = pow2_at_least(shape.columns, 256 / lanes);
    p.block = dim3(width, lanes);
  }
  const int64_t column_blocks = ceil_div(shape.columns, width);
  p.column_grid = static_cast<unsigned>(std::min<int64_t>(column_blocks, INT_MAX));
  p.splits = 1;
  const int64_t wave = std::max<int64_t>(1, resident / (int64_t{lanes} * width));
  if (allow_split && column_blocks < wave) {
    p.splits = static_cast<unsigned>(std::clamp<int64_t>(
        std::min(ceil_div(wave, column_blocks), shape.reduced / (lanes * kPerLaneBeforeSplit)), 1, 65535));
  }
  return p;
}

template <typename T, typename R, typename Reducer>
void launch_reduce(const Tensor& in, ReduceGeometry g, const Reducer& r, const Tensor& out, int device,
                   cudaStream_t stream) {
  using Acc = typename Reducer::Acc;
  const int64_t resident = resident_threads(device);
  const ReduceShape shape{g.outer * g.inner, g.reduced, g.inner};
  const ElementSource<T> elements{static_cast<const T*>(in.raw_data())};
  R* result = static_cast<R*>(out.raw_data());
  const Plan first = plan(shape, resident, /*allow_split=*/true);
  if (first.splits == 1) {
    reduce_kernel<<<first.column_grid, first.block, 0, stream>>>(elements, r, shape, first.lanes_on_x, result,
                                                                 static_cast<Acc*>(nullptr));
    TS_CUDA_CHECK(cudaGetLastError());
    return;
  }
  // The scratch buffer goes back to the caching allocator on return; it is
  // reused only by work queued later on this stream, after these kernels.
  const Tensor scratch =
      Tensor::allocate({shape.columns * first.splits * static_cast<int64_t>(sizeof(Acc))}, DType::kU8, out.device());
  Acc* partial = static_cast<Acc*>(scratch.raw_data());
  reduce_kernel<<<dim3(first.column_grid, first.splits), first.block, 0, stream>>>(elements, r, shape, first.lanes_on_x,
                                                                                   result, partial);
  TS_CUDA_CHECK(cudaGetLastError());
  const ReduceShape partials{shape.columns, first.splits, 1};
  const Plan second = plan(partials, resident, /*allow_split=*/false);
  reduce_kernel<<<second.column_grid, second.block, 0, stream>>>(PartialSource<Acc>{partial}, r, partials,
                                                                 second.lanes_on_x, result, partial);
  TS_CUDA_CHECK(cudaGetLastError());
}

// Whether the frontends ever send this pair: integer sums arrive as i64, so
// u8 and i32 only need max, min and their arg versions.
template <typename T, typename Reducer>
constexpr bool requested() {
  if constexpr (std::is_same_v<Reducer, functors::UnsupportedReducer>) {
    return false;
  } else if constexpr (std::is_same_v<Reducer, functors::SumReducer<int64_t>>) {
    return std::is_same_v<T, int64_t>;
  } else {
    return true;
  }
}

}  // namespace

void CudaBackend::reduce(ReduceOp op, const Tensor& in, ReduceGeometry geometry, double param, const Tensor& out) {
  const int device = out.device().index;
  DeviceGuard guard(device);
  const cudaStream_t stream = current_stream(device);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      no_kernel("cuda", op_name(op), in.dtype());
    } else {
      functors::visit_reduce<ReduceAcc<T>>(op, param, geometry.reduced, [&](auto r) {
        using Reducer = decltype(r);
        if constexpr (!requested<T, Reducer>()) {
          no_kernel("cuda", op_name(op), in.dtype());
        } else {
          // Arg reductions write i64 indices, the others the input's type.
          using R = std::conditional_t<functors::kReturnsIndex<Reducer>, int64_t, T>;
          launch_reduce<T, R>(in, geometry, r, out, device, stream);
        }
      });
    }
  });
}

}  // namespace ts::cuda
