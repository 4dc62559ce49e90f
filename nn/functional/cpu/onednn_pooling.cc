// Pooling is memory-bound, so the primitives work on our plain layout
// directly (nchw with the planes as channels, or nhwc for channels-last)
// rather than on a blocked one that would need a reorder each way.
#include "nn/functional/cpu/onednn_pooling.h"

#include <algorithm>
#include <mutex>
#include <tuple>

#include "nn/functional/cpu/onednn_runtime.h"

namespace ts::nn::functional {
namespace {

using dnnl::memory;

// The window as oneDNN takes it. Adaptive pooling with uniform windows is a
// plain pooling with kernel = stride = in / out.
struct Window {
  memory::dims kernel, strides, pad_l, pad_r;
};

// Right/bottom padding that yields our output size (ceil_mode may need more
// than the left/top padding); symmetric when floor division leaves slack.
int64_t far_padding(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p) {
  return std::max(p, (out - 1) * s + k - in - p);
}

Window window(const Pool2dGeometry& g) {
  if (g.adaptive) {
    const int64_t kh = g.h / g.out_h, kw = g.w / g.out_w;
    return {{kh, kw}, {kh, kw}, {0, 0}, {0, 0}};
  }
  return {{g.kh, g.kw},
          {g.stride_h, g.stride_w},
          {g.pad_h, g.pad_w},
          {far_padding(g.h, g.out_h, g.kh, g.stride_h, g.pad_h), far_padding(g.w, g.out_w, g.kw, g.stride_w, g.pad_w)}};
}

memory::desc plain(const Pool2dGeometry& g, int64_t h, int64_t w) {
  if (g.channels_last) {
    return memory::desc({g.planes / g.channels, g.channels, h, w}, memory::data_type::f32, memory::format_tag::nhwc);
  }
  return memory::desc({1, g.planes, h, w}, memory::data_type::f32, memory::format_tag::nchw);
}
memory::desc plain_x(const Pool2dGeometry& g) { return plain(g, g.h, g.w); }
memory::desc plain_y(const Pool2dGeometry& g) { return plain(g, g.out_h, g.out_w); }

// Adaptive pooling counts no padding; ours has none either way.
dnnl::algorithm algorithm(const Pool2dGeometry& g) {
  return g.count_include_pad && !g.adaptive ? dnnl::algorithm::pooling_avg_include_padding
                                            : dnnl::algorithm::pooling_avg_exclude_padding;
}

dnnl::pooling_forward::primitive_desc forward_descriptor(const Pool2dGeometry& g) {
  const Window win = window(g);
  const dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_training, algorithm(g), plain_x(g), plain_y(g),
                                         win.strides, win.kernel, win.pad_l, win.pad_r);
  return dnnl::pooling_forward::primitive_desc(desc, onednn_runtime().engine);
}

dnnl::primitive build(bool backward, const Pool2dGeometry& g) {
  if (!backward) return dnnl::pooling_forward(forward_descriptor(g));
  const Window win = window(g);
  const dnnl::pooling_backward::desc desc(algorithm(g), plain_x(g), plain_y(g), win.strides, win.kernel, win.pad_l,
                                          win.pad_r);
  return dnnl::pooling_backward(
      dnnl::pooling_backward::primitive_desc(desc, onednn_runtime().engine, forward_descriptor(g)));
}

// (backward, planes, channels if channels-last else 0, h, w, out_h, out_w,
// kernel, stride, padding, algorithm).
using CacheKey = std::tuple<bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, Window, dnnl::algorithm>;
bool operator<(const Window& a, const Window& b) {
  return std::tie(a.kernel, a.strides, a.pad_l, a.pad_r) < std::tie(b.kernel, b.strides, b.pad_l, b.pad_r);
}

OnednnCache<CacheKey, dnnl::primitive>& primitive_cache() {
  static auto* cache = new OnednnCache<CacheKey, dnnl::primitive>;
  return *cache;
}

// Runs one direction from `from` (x or grad_out) into `to`, turning a oneDNN
// failure into ts::Error.
void run(bool backward, const Pool2dGeometry& g, const Tensor& from, const Tensor& to) {
  try {
    const CacheKey key{backward,  g.planes,    g.channels_last ? g.channels : 0, g.h, g.w, g.out_h, g.out_w,
                       window(g), algorithm(g)};
    const auto primitive = primitive_cache().get(key, [&] { return build(backward, g); });
    OnednnRuntime& rt = onednn_runtime();
    std::lock_guard<std::mutex> lock(rt.mu);
    const memory x(plain_x(g), rt.engine, (backward ? to : from).raw_data());
    const memory y(plain_y(g), rt.engine, (backward ? from : to).raw_data());
    if (backward) {
      primitive->execute(rt.stream, {{DNNL_ARG_DIFF_DST, y}, {DNNL_ARG_DIFF_SRC, x}});
    } else {
      primitive->execute(rt.stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
    }
    rt.stream.wait();
  } catch (const dnnl::error& e) {
    throw_onednn_error(e, g.adaptive ? "adaptive_avg_pool2d" : "avg_pool2d", ": oneDNN ",
                       backward ? "backward" : "forward", " failed for ", g.planes, " planes of [", g.h, ", ", g.w,
                       "] to [", g.out_h, ", ", g.out_w, "], kernel [", g.kh, ", ", g.kw, "], stride [", g.stride_h,
                       ", ", g.stride_w, "], padding [", g.pad_h, ", ", g.pad_w, "]");
  }
}

}  // namespace

bool onednn_avg_pool2d_supports(const Pool2dGeometry& g) {
  if (g.adaptive) return g.h % g.out_h == 0 && g.w % g.out_w == 0;
  const Window win = window(g);
  return !g.count_include_pad || (win.pad_r[0] == g.pad_h && win.pad_r[1] == g.pad_w);
}

void onednn_avg_pool2d_forward(const Pool2dGeometry& g, const Tensor& x, const Tensor& out) { run(false, g, x, out); }

void onednn_avg_pool2d_backward(const Pool2dGeometry& g, const Tensor& grad_out, const Tensor& grad_x) {
  run(true, g, grad_out, grad_x);
}

}  // namespace ts::nn::functional
