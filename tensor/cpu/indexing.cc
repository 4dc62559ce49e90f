// CPU cat, index_select, gather and scatter_add over contiguous tensors. Each
// views its tensors as [outer, dim, inner] around the indexed dim and moves
// whole inner runs where it can.
#include <cstring>

#include "tensor/cpu/cpu_backend.h"
#include "tensor/cpu/dispatch.h"
#include "tensor/cpu/parallel.h"

namespace ts::cpu {
namespace {

struct Around {
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
};

Around around(const Tensor& t, int64_t dim) {
  Around a;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < dim) a.outer *= t.shape()[d];
    if (d == dim) a.size = t.shape()[d];
    if (d > dim) a.inner *= t.shape()[d];
  }
  return a;
}

constexpr int64_t kGrainBytes = 1 << 16;

}  // namespace

void CpuBackend::cat(absl::Span<const Tensor> inputs, int64_t dim, const Tensor& out) {
  const Around o = around(out, dim);
  const int64_t item = out.itemsize();
  char* dst = static_cast<char*>(out.raw_data());
  int64_t position = 0;  // along dim, where the next input starts
  for (const Tensor& in : inputs) {
    const Around i = around(in, dim);
    const int64_t run = i.size * i.inner * item;  // one outer slice of this input
    const char* src = static_cast<const char*>(in.raw_data());
    if (run > 0) {
      parallel_for(o.outer, std::max<int64_t>(1, kGrainBytes / run), [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          std::memcpy(dst + (k * o.size + position) * o.inner * item, src + k * run, run);
        }
      });
    }
    position += i.size;
  }
}

void CpuBackend::index_select(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) {
  const Around i = around(in, dim);
  const int64_t n = index.numel();
  const int64_t* idx = static_cast<const int64_t*>(index.raw_data());
  const int64_t run = i.inner * in.itemsize();
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  parallel_for(i.outer * n, std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(run, 1)), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t k = t / n, j = t % n;
      std::memcpy(dst + t * run, src + (k * i.size + idx[j]) * run, run);
    }
  });
}

namespace {

// Calls fn(p, target_offset) for each position p of the contiguous `index`,
// where target_offset is the element of contiguous `target` at p's
// coordinates with the `dim` coordinate replaced by index[p]. Chunks of
// `grain` positions run in parallel.
template <typename Fn>
void for_each_index(const Tensor& index, int64_t dim, const Tensor& target, int64_t grain, Fn fn) {
  const int64_t nd = index.dim();
  const Shape target_strides = contiguous_strides(target.shape());
  const Shape& index_shape = index.shape();
  const int64_t* idx = static_cast<const int64_t*>(index.raw_data());
  parallel_for(index.numel(), grain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      int64_t rest = p, target_offset = 0;
      for (int64_t d = nd - 1; d >= 0; --d) {
        const int64_t coord = rest % index_shape[d];
        rest /= index_shape[d];
        target_offset += (d == dim ? idx[p] : coord) * target_strides[d];
      }
      fn(p, target_offset);
    }
  });
}

}  // namespace

void CpuBackend::gather(const Tensor& in, int64_t dim, const Tensor& index, const Tensor& out) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = static_cast<const T*>(in.raw_data());
    T* dst = static_cast<T*>(out.raw_data());
    for_each_index(index, dim, in, 4096, [&](int64_t p, int64_t source) { dst[p] = src[source]; });
  });
}

void CpuBackend::scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  // Repeated indices make positions collide, so this one runs on one thread.
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      no_kernel("cpu", "scatter_add", out.dtype());
    } else {
      const T* values = static_cast<const T*>(src.raw_data());
      T* dst = static_cast<T*>(out.raw_data());
      for_each_index(index, dim, out, index.numel(),
                     [&](int64_t p, int64_t target) { dst[target] = store<T>(load(dst[target]) + load(values[p])); });
    }
  });
}

}  // namespace ts::cpu
