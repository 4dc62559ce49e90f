// The index arithmetic of convolution and pooling, shared by the op frontends
// (which validate and fill it in) and by the CPU and CUDA kernels.
#pragma once

#include <array>
#include <cstdint>

#include "tensor/host_device.h"
#include "tensor/int_divider.h"

namespace ts::nn::functional {

// A convolution over 2 or 3 spatial dims: x [n, c_in, (d,) h, w] * weight
// [c_out, c_in / groups, (kd,) kh, kw] -> [n, c_out, (out_d,) out_h, out_w].
// A 2-D one is the 3-D one with depth 1 (d = kd = out_d = stride_d = dil_d =
// 1, pad_d = 0), which is how the CPU reference computes it; oneDNN and cuDNN
// are given descriptors of `spatial_dims` dims.
struct ConvGeometry {
  int spatial_dims = 2;
  int64_t n, c_in, d = 1, h, w;
  int64_t c_out, kd = 1, kh, kw;
  int64_t out_d = 1, out_h, out_w;
  int64_t stride_d = 1, stride_h, stride_w, pad_d = 0, pad_h, pad_w, dil_d = 1, dil_h, dil_w;
  int64_t groups;
  // x, the output and their gradients are channels-last
  // (MemoryFormat::kChannelsLast: [n, (d,) h, w, c] in memory) rather than
  // row-major; so are the weight and its gradient when weight_channels_last
  // ([c_out, (kd,) kh, kw, c_in / groups]). The device's kernels choose
  // (LayerKernels::conv_layouts).
  bool channels_last = false;
  bool weight_channels_last = false;
};

// Everything but the output size (which follows from the rest): the key of
// the caches of per-shape choices (cuDNN's algorithms, oneDNN's primitives).
using ConvShapeKey = std::array<int64_t, 22>;
inline ConvShapeKey shape_key(const ConvGeometry& g) {
  return {g.spatial_dims,
          g.n,
          g.c_in,
          g.d,
          g.h,
          g.w,
          g.c_out,
          g.kd,
          g.kh,
          g.kw,
          g.stride_d,
          g.stride_h,
          g.stride_w,
          g.pad_d,
          g.pad_h,
          g.pad_w,
          g.dil_d,
          g.dil_h,
          g.dil_w,
          g.groups,
          g.channels_last,
          g.weight_channels_last};
}

// Pooling over `planes` (= images * channels) independent [h, w] planes.
struct Pool2dGeometry {
  int64_t planes, channels, h, w;
  int64_t out_h, out_w;
  int64_t kh, kw, stride_h, stride_w, pad_h, pad_w;
  bool count_include_pad;
  bool adaptive;  // PyTorch's adaptive windows; kernel/stride/pad unused
  // Input and output are channels-last ([n, h, w, c] in memory): a plane's
  // pixels lie `channels` apart instead of side by side.
  bool channels_last = false;
};

// The divisions pooling's index arithmetic makes per element, set up once
// per op as multiply-shifts (a GPU has no integer divider): by the channel
// count, the input and output widths and plane sizes, and the strides.
struct PoolDividers {
  // An empty extent has nothing to divide (and adaptive pooling no stride):
  // its divider is by 1 and never used.
  explicit PoolDividers(const Pool2dGeometry& g)
      : channels(at_least_one(g.channels)),
        w(at_least_one(g.w)),
        out_w(at_least_one(g.out_w)),
        plane(at_least_one(g.h * g.w)),
        out_plane(at_least_one(g.out_h * g.out_w)),
        stride_h(g.adaptive ? 1 : at_least_one(g.stride_h)),
        stride_w(g.adaptive ? 1 : at_least_one(g.stride_w)) {}
  IntDivider channels, w, out_w, plane, out_plane, stride_h, stride_w;

 private:
  static int64_t at_least_one(int64_t n) { return n > 0 ? n : 1; }
};

// Plane p of a pooling input (rows, cols = h, w) or output (out_h, out_w) in
// g's layout: its pixel row * cols + col lies at base + pixel * step.
struct PoolPlane {
  int64_t base, step;
  TS_HOST_DEVICE int64_t at(int64_t pixel) const { return base + pixel * step; }
};
TS_HOST_DEVICE PoolPlane pool_plane(const Pool2dGeometry& g, const IntDivider& by_channels, int64_t p, int64_t rows,
                                    int64_t cols) {
  if (!g.channels_last) return {p * rows * cols, 1};
  const int64_t image = by_channels.div(p);
  return {image * rows * cols * g.channels + (p - image * g.channels), g.channels};
}

// The plane and pixel of the element at memory position `position` of a
// pooling input or output in g's layout, by_plane dividing by its plane size
// (h * w or out_h * out_w): the kernels walk their result in memory order,
// so neighbouring threads or iterations write neighbouring elements in
// either layout.
struct PoolElement {
  int64_t plane, pixel;
};
TS_HOST_DEVICE PoolElement pool_element_at(const Pool2dGeometry& g, const IntDivider& by_channels,
                                           const IntDivider& by_plane, int64_t position) {
  const int64_t per_plane = by_plane.divisor();
  if (!g.channels_last) {
    const int64_t plane = by_plane.div(position);
    return {plane, position - plane * per_plane};
  }
  const int64_t rest = by_channels.div(position), c = position - rest * g.channels;
  const int64_t image = by_plane.div(rest);
  return {image * g.channels + c, rest - image * per_plane};
}

// The outputs [begin, end) along one dim whose windows hold input index i
// (max and average pooling; not adaptive): those starting at or before i,
// o * stride - pad <= i, and ending after it, o * stride - pad + kernel > i.
struct PoolCover {
  int64_t begin, end;
};
TS_HOST_DEVICE PoolCover pool_cover(int64_t i, int64_t kernel, const IntDivider& by_stride, int64_t pad, int64_t out) {
  const int64_t begin = i + pad < kernel ? 0 : by_stride.div(i + pad - kernel) + 1;
  const int64_t end = by_stride.div(i + pad) + 1;
  return {begin, end < out ? end : out};
}

// The same for adaptive pooling, whose output o reads [floor(o * in / out),
// ceil((o + 1) * in / out)): it holds i exactly when o < (i + 1) * out / in
// and o + 1 > i * out / in, that is o in [floor(i * out / in),
// ceil((i + 1) * out / in)).
TS_HOST_DEVICE PoolCover adaptive_pool_cover(int64_t i, int64_t in, int64_t out) {
  return {i * out / in, ((i + 1) * out + in - 1) / in};
}

// The input rows [h0, h1) and columns [w0, w1) one output element reads,
// clamped to the input, and what an average divides by.
struct PoolWindow {
  int64_t h0, h1, w0, w1;
  int64_t divisor;
};

TS_HOST_DEVICE PoolWindow pool_window(const Pool2dGeometry& g, int64_t oh, int64_t ow) {
  PoolWindow win;
  if (g.adaptive) {
    // start = floor(i * in / out), end = ceil((i + 1) * in / out).
    win.h0 = oh * g.h / g.out_h;
    win.h1 = ((oh + 1) * g.h + g.out_h - 1) / g.out_h;
    win.w0 = ow * g.w / g.out_w;
    win.w1 = ((ow + 1) * g.w + g.out_w - 1) / g.out_w;
    win.divisor = (win.h1 - win.h0) * (win.w1 - win.w0);
    return win;
  }
  int64_t h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
  // A window may reach into the padding on the far side but no further (as
  // PyTorch counts it for count_include_pad).
  int64_t h1 = h0 + g.kh < g.h + g.pad_h ? h0 + g.kh : g.h + g.pad_h;
  int64_t w1 = w0 + g.kw < g.w + g.pad_w ? w0 + g.kw : g.w + g.pad_w;
  const int64_t padded_size = (h1 - h0) * (w1 - w0);
  win.h0 = h0 > 0 ? h0 : 0;
  win.w0 = w0 > 0 ? w0 : 0;
  win.h1 = h1 < g.h ? h1 : g.h;
  win.w1 = w1 < g.w ? w1 : g.w;
  win.divisor = g.count_include_pad ? padded_size : (win.h1 - win.h0) * (win.w1 - win.w0);
  return win;
}

}  // namespace ts::nn::functional
