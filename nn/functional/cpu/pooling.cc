// CPU pooling. f32 average pooling runs on oneDNN (onednn_pooling.cc) where
// oneDNN computes PyTorch's average, unless the reference path is asked for
// (cpu_reference_path.h); the rest runs the reference kernels below,
// threaded over planes: each task owns whole [h, w] planes, so the backward
// scatters into grad_x without races. A channels-last plane's pixels lie
// `channels` apart (PoolPlane); channels-last max pooling, on the path of
// every network's stem, has loops of its own with the channels innermost.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "nn/functional/cpu/cpu_kernels.h"
#include "nn/functional/cpu/onednn_pooling.h"
#include "nn/functional/cpu_reference_path.h"
#include "tensor/cpu/parallel.h"

namespace ts::nn::functional {
namespace {

template <typename PlaneFn>
void for_each_plane(const Pool2dGeometry& g, PlaneFn fn) {
  cpu::parallel_for(g.planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) fn(p);
  });
}

// The flat index (row * w + col) of the window's largest element, the
// first of equals; a NaN wins, the last one, as in PyTorch's kernels (no
// value compares greater than a NaN, and each NaN takes the place), so a NaN
// input gives a NaN output and its gradient goes where PyTorch sends it.
template <typename T>
int64_t window_argmax(const Pool2dGeometry& g, const PoolWindow& win, const T* x, const PoolPlane& in) {
  int64_t best_at = win.h0 * g.w + win.w0;
  T best = -std::numeric_limits<T>::infinity();
  for (int64_t ih = win.h0; ih < win.h1; ++ih) {
    for (int64_t iw = win.w0; iw < win.w1; ++iw) {
      const T v = x[in.at(ih * g.w + iw)];
      if (v > best || std::isnan(v)) {
        best = v;
        best_at = ih * g.w + iw;
      }
    }
  }
  return best_at;
}

// Plane p of the input and of the output.
PoolPlane input_plane(const Pool2dGeometry& g, int64_t p) { return pool_plane(g, IntDivider(g.channels), p, g.h, g.w); }
PoolPlane output_plane(const Pool2dGeometry& g, int64_t p) {
  return pool_plane(g, IntDivider(g.channels), p, g.out_h, g.out_w);
}

template <typename T>
void max_forward(const Pool2dGeometry& g, const T* x, T* out, int32_t* indices) {
  for_each_plane(g, [&](int64_t p) {
    const PoolPlane in = input_plane(g, p), to = output_plane(g, p);
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t at = window_argmax(g, pool_window(g, oh, ow), x, in);
        const int64_t o = to.at(oh * g.out_w + ow);
        out[o] = x[in.at(at)];
        indices[o] = static_cast<int32_t>(at);
      }
    }
  });
}

// Zeroes plane p of grad_x, which the backward then scatters into.
template <typename T>
void zero_plane(const Pool2dGeometry& g, const PoolPlane& plane, T* grad_x) {
  for (int64_t pixel = 0; pixel < g.h * g.w; ++pixel) grad_x[plane.at(pixel)] = T(0);
}

template <typename T>
void max_backward(const Pool2dGeometry& g, const T* grad_out, const int32_t* indices, T* grad_x) {
  for_each_plane(g, [&](int64_t p) {
    const PoolPlane in = input_plane(g, p), from = output_plane(g, p);
    zero_plane(g, in, grad_x);
    for (int64_t pixel = 0; pixel < g.out_h * g.out_w; ++pixel) {
      const int64_t o = from.at(pixel);
      grad_x[in.at(indices[o])] += grad_out[o];
    }
  });
}

template <typename T>
void avg_forward(const Pool2dGeometry& g, const T* x, T* out) {
  for_each_plane(g, [&](int64_t p) {
    const PoolPlane in = input_plane(g, p), to = output_plane(g, p);
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const PoolWindow win = pool_window(g, oh, ow);
        T sum = 0;
        for (int64_t ih = win.h0; ih < win.h1; ++ih) {
          for (int64_t iw = win.w0; iw < win.w1; ++iw) sum += x[in.at(ih * g.w + iw)];
        }
        out[to.at(oh * g.out_w + ow)] = sum / static_cast<T>(win.divisor);
      }
    }
  });
}

template <typename T>
void avg_backward(const Pool2dGeometry& g, const T* grad_out, T* grad_x) {
  for_each_plane(g, [&](int64_t p) {
    const PoolPlane in = input_plane(g, p), from = output_plane(g, p);
    zero_plane(g, in, grad_x);
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const PoolWindow win = pool_window(g, oh, ow);
        const T share = grad_out[from.at(oh * g.out_w + ow)] / static_cast<T>(win.divisor);
        for (int64_t ih = win.h0; ih < win.h1; ++ih) {
          for (int64_t iw = win.w0; iw < win.w1; ++iw) grad_x[in.at(ih * g.w + iw)] += share;
        }
      }
    }
  });
}

// Channels-last max pooling, every channel of a pixel a vector lane so the
// reads are contiguous: the window is scanned in window_argmax's order and
// each channel ends at the index it gives (the last NaN, else the first
// largest value). The forward is threaded over output rows; the backward
// over images, each task owning an image's gradient, which it sums into in
// output order as the row-major path does.
template <typename T>
void max_forward_channels_last(const Pool2dGeometry& g, const T* x, T* out, int32_t* indices) {
  const int64_t c = g.channels;
  cpu::parallel_for(g.planes / c * g.out_h, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> best(c);
    std::vector<int32_t> at(c);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t image = row / g.out_h, oh = row % g.out_h;
      const T* in = x + image * g.h * g.w * c;
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const PoolWindow win = pool_window(g, oh, ow);
        std::fill(best.begin(), best.end(), -std::numeric_limits<T>::infinity());
        std::fill(at.begin(), at.end(), static_cast<int32_t>(win.h0 * g.w + win.w0));
        for (int64_t ih = win.h0; ih < win.h1; ++ih) {
          for (int64_t iw = win.w0; iw < win.w1; ++iw) {
            const int32_t pixel = static_cast<int32_t>(ih * g.w + iw);
            const T* v = in + pixel * c;
            for (int64_t ch = 0; ch < c; ++ch) {
              if (v[ch] > best[ch] || std::isnan(v[ch])) {
                best[ch] = v[ch];
                at[ch] = pixel;
              }
            }
          }
        }
        const int64_t o = (row * g.out_w + ow) * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          out[o + ch] = in[at[ch] * c + ch];
          indices[o + ch] = at[ch];
        }
      }
    }
  });
}

template <typename T>
void max_backward_channels_last(const Pool2dGeometry& g, const T* grad_out, const int32_t* indices, T* grad_x) {
  const int64_t c = g.channels, in_size = g.h * g.w * c, out_size = g.out_h * g.out_w * c;
  cpu::parallel_for(g.planes / c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t image = begin; image < end; ++image) {
      T* gx = grad_x + image * in_size;
      std::fill(gx, gx + in_size, T(0));
      const T* gy = grad_out + image * out_size;
      const int32_t* from = indices + image * out_size;
      for (int64_t o = 0; o < out_size; o += c) {
        for (int64_t ch = 0; ch < c; ++ch) gx[from[o + ch] * c + ch] += gy[o + ch];
      }
    }
  });
}

bool use_onednn(const Pool2dGeometry& g, DType dtype) {
  return dtype == DType::kF32 && !cpu_reference_path() && onednn_avg_pool2d_supports(g);
}

}  // namespace

void CpuKernels::max_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out,
                                    const Tensor& indices) const {
  dispatch_f32_f64("max_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (g.channels_last) return max_forward_channels_last<T>(g, x.data<T>(), out.data<T>(), indices.data<int32_t>());
    max_forward<T>(g, x.data<T>(), out.data<T>(), indices.data<int32_t>());
  });
}

void CpuKernels::max_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& indices,
                                     const Tensor& grad_x) const {
  dispatch_f32_f64("max_pool2d backward", grad_out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (g.channels_last) {
      return max_backward_channels_last<T>(g, grad_out.data<T>(), indices.data<int32_t>(), grad_x.data<T>());
    }
    max_backward<T>(g, grad_out.data<T>(), indices.data<int32_t>(), grad_x.data<T>());
  });
}

void CpuKernels::avg_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out) const {
  if (use_onednn(g, x.dtype())) return onednn_avg_pool2d_forward(g, x, out);
  dispatch_f32_f64("avg_pool2d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    avg_forward<T>(g, x.data<T>(), out.data<T>());
  });
}

void CpuKernels::avg_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& grad_x) const {
  if (use_onednn(g, grad_out.dtype())) return onednn_avg_pool2d_backward(g, grad_out, grad_x);
  dispatch_f32_f64("avg_pool2d backward", grad_out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    avg_backward<T>(g, grad_out.data<T>(), grad_x.data<T>());
  });
}

}  // namespace ts::nn::functional
