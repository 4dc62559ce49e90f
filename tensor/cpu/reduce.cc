// CPU reductions and softmax over [outer, reduced, inner] blocks.
#include <cmath>
#include <vector>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dispatch.h"
#include "tensor/cpu/isa.h"
#include "tensor/cpu/lanes.h"
#include "tensor/cpu/parallel.h"
#include "tensor/cpu/vector_exp.h"
#include "tensor/functors.h"

namespace ts::cpu {
namespace {

constexpr int64_t kReduceGrain = 16384;  // input elements per parallel chunk
constexpr int kLanes = 8;                // independent accumulators per row

// Combines x[begin, end) (stride `stride`, logical positions from `begin`)
// into one accumulator, spreading consecutive elements over kLanes
// accumulators so the combine chain does not serialize the loop.
template <typename T, typename Reducer>
typename Reducer::Acc reduce_range(const T* x, int64_t stride, int64_t begin, int64_t end, const Reducer& r) {
  using V = ReduceAcc<T>;
  typename Reducer::Acc lanes[kLanes];
  for (auto& l : lanes) l = r.identity();
  int64_t j = begin;
  for (; j + kLanes <= end; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) {
      lanes[k] = r.combine(lanes[k], r.transform(static_cast<V>(load(x[(j + k) * stride])), j + k));
    }
  }
  for (; j < end; ++j) lanes[0] = r.combine(lanes[0], r.transform(static_cast<V>(load(x[j * stride])), j));
  for (int k = 1; k < kLanes; ++k) lanes[0] = r.combine(lanes[0], lanes[k]);
  return lanes[0];
}

template <typename T, typename R, typename Reducer>
void reduce_kernel(const T* in, R* out, ReduceGeometry g, const Reducer& r) {
  using Acc = typename Reducer::Acc;
  if (g.inner == 1 && g.reduced >= 2 * kReduceGrain) {
    // Long rows: each cut into parts of kReduceGrain, the parts of all rows
    // reduced in parallel, then each row's combined in order. The cut
    // depends on the row's length alone, so the result does not depend on
    // the thread count (a reference in f64 must not).
    const int64_t parts = (g.reduced + kReduceGrain - 1) / kReduceGrain;
    std::vector<Acc> partial(g.outer * parts, r.identity());
    parallel_for(g.outer * parts, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t o = t / parts, p = t % parts;
        partial[t] =
            reduce_range(in + o * g.reduced, 1, p * kReduceGrain, std::min(g.reduced, (p + 1) * kReduceGrain), r);
      }
    });
    for (int64_t o = 0; o < g.outer; ++o) {
      Acc acc = r.identity();
      for (int64_t p = 0; p < parts; ++p) acc = r.combine(acc, partial[o * parts + p]);
      out[o] = store<R>(r.finalize(acc));
    }
    return;
  }
  if (g.inner == 1) {
    parallel_for(g.outer, std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(1, g.reduced)),
                 [&](int64_t o0, int64_t o1) {
                   for (int64_t o = o0; o < o1; ++o) {
                     out[o] = store<R>(r.finalize(reduce_range(in + o * g.reduced, 1, 0, g.reduced, r)));
                   }
                 });
    return;
  }
  // Reducing a non-innermost axis: walk each [reduced, inner] slab row by row
  // so reads stay contiguous, accumulating a block of inner positions at once.
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (g.inner + kBlock - 1) / kBlock;
  using V = ReduceAcc<T>;
  parallel_for(g.outer * blocks, std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(1, g.reduced * kBlock)),
               [&](int64_t t0, int64_t t1) {
                 Acc acc[kBlock];
                 for (int64_t t = t0; t < t1; ++t) {
                   const int64_t o = t / blocks;
                   const int64_t i0 = (t % blocks) * kBlock;
                   const int64_t width = std::min(kBlock, g.inner - i0);
                   for (int64_t i = 0; i < width; ++i) acc[i] = r.identity();
                   const T* slab = in + o * g.reduced * g.inner + i0;
                   for (int64_t j = 0; j < g.reduced; ++j) {
                     const T* line = slab + j * g.inner;
                     for (int64_t i = 0; i < width; ++i) {
                       acc[i] = r.combine(acc[i], r.transform(static_cast<V>(load(line[i])), j));
                     }
                   }
                   for (int64_t i = 0; i < width; ++i) out[o * g.inner + i0 + i] = store<R>(r.finalize(acc[i]));
                 }
               });
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const Tensor& in, ReduceGeometry geometry, double param, const Tensor& out) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      no_kernel("cpu", op_name(op), in.dtype());
    } else {
      functors::visit_reduce<ReduceAcc<T>>(op, param, geometry.reduced, [&](auto r) {
        using Reducer = decltype(r);
        if constexpr (std::is_same_v<Reducer, functors::UnsupportedReducer>) {
          no_kernel("cpu", op_name(op), in.dtype());
        } else {
          // Arg reductions write i64 indices, the others the input's type.
          using R = std::conditional_t<functors::kReturnsIndex<Reducer>, int64_t, T>;
          reduce_kernel(static_cast<const T*>(in.raw_data()), static_cast<R*>(out.raw_data()), geometry, r);
        }
      });
    }
  });
}

void CpuBackend::softmax(const Tensor& in, ReduceGeometry g, bool log, const Tensor& out) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_v<T>) {
      no_kernel("cpu", "softmax", in.dtype());
    } else {
      using A = ReduceAcc<T>;  // double: exact enough to be a reference too
      static_assert(std::is_same_v<A, double>, "softmax's lanes and exp_lanes are double");
      const T* x = static_cast<const T*>(in.raw_data());
      T* y = static_cast<T*>(out.raw_data());
      const int64_t grain = std::max<int64_t>(1, kReduceGrain / std::max<int64_t>(1, g.reduced));
      parallel_for_widest(g.outer * g.inner, grain, [&](int64_t r0, int64_t r1) TS_INLINE_INTO_CLONE {
        for (int64_t r = r0; r < r1; ++r) {
          const T* row = x + (r / g.inner) * g.reduced * g.inner + r % g.inner;
          T* row_out = y + (row - x);
          const auto value = [&](int64_t j) TS_INLINE_INTO_CLONE { return static_cast<A>(load(row[j * g.inner])); };
          const A max_value = lane_max(g.reduced, value);
          const A total =
              lane_sum(g.reduced, [&](int64_t j) TS_INLINE_INTO_CLONE { return exp_lanes(value(j) - max_value); });
          const A log_total = std::log(total);
          for (int64_t j = 0; j < g.reduced; ++j) {
            const A shifted = value(j) - max_value;
            row_out[j * g.inner] = store<T>(log ? shifted - log_total : exp_lanes(shifted) / total);
          }
        }
      });
    }
  });
}

}  // namespace ts::cpu
