// Each direction's oneDNN primitive is built once per (direction, shape,
// bias) and cached (onednn_runtime.h), as the cuDNN path caches its
// algorithm.
//
// oneDNN chooses the operands' internal layouts (format_tag::any, usually
// channel-blocked) while our tensors stay plain, NC(D)HW/OI(D)HW or their
// channels-last forms N(D)HWC/O(D)HWI, so every call reorders its operands
// in and its result out as needed, with reorder primitives built alongside
// the convolution and buffers from our caching allocator. The ops around a
// convolution (batch norm, ReLU, the residual add) are ours and read the
// plain layout, so a convolution is a run of oneDNN ops of its own and its
// edges are where the reorders belong.
#include "nn/functional/cpu/onednn_conv.h"

#include <array>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "nn/functional/cpu/onednn_runtime.h"

namespace ts::nn::functional {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

enum class Direction { kForward, kBackwardData, kBackwardWeights };

const char* direction_name(Direction direction) {
  switch (direction) {
    case Direction::kForward:
      return "forward";
    case Direction::kBackwardData:
      return "backward-data";
    case Direction::kBackwardWeights:
      return "backward-weights";
  }
  return "?";
}

// The plain layouts of our tensors, of 2 or 3 spatial dims, row-major or
// channels-last. Grouped weights [c_out, c_in / g, (kd,) kh, kw] are, in
// memory, oneDNN's [g, c_out / g, c_in / g, (kd,) kh, kw] (goihw, goidhw;
// gohwi, godhwi channels-last).
memory::dims spatial(const ConvGeometry& g, int64_t d, int64_t h, int64_t w) {
  return g.spatial_dims == 3 ? memory::dims{d, h, w} : memory::dims{h, w};
}
memory::dims concat(memory::dims head, const memory::dims& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}
Tag activation_tag(const ConvGeometry& g) {
  if (g.spatial_dims == 3) return g.channels_last ? Tag::ndhwc : Tag::ncdhw;
  return g.channels_last ? Tag::nhwc : Tag::nchw;
}
memory::desc plain_x(const ConvGeometry& g) {
  return memory::desc(concat({g.n, g.c_in}, spatial(g, g.d, g.h, g.w)), memory::data_type::f32, activation_tag(g));
}
memory::desc plain_y(const ConvGeometry& g) {
  return memory::desc(concat({g.n, g.c_out}, spatial(g, g.out_d, g.out_h, g.out_w)), memory::data_type::f32,
                      activation_tag(g));
}
memory::desc plain_weight(const ConvGeometry& g) {
  const memory::dims kernel = spatial(g, g.kd, g.kh, g.kw);
  const bool volume = g.spatial_dims == 3, last = g.weight_channels_last;
  if (g.groups == 1) {
    const Tag tag = volume ? (last ? Tag::odhwi : Tag::oidhw) : (last ? Tag::ohwi : Tag::oihw);
    return memory::desc(concat({g.c_out, g.c_in}, kernel), memory::data_type::f32, tag);
  }
  const Tag tag = volume ? (last ? Tag::godhwi : Tag::goidhw) : (last ? Tag::gohwi : Tag::goihw);
  return memory::desc(concat({g.groups, g.c_out / g.groups, g.c_in / g.groups}, kernel), memory::data_type::f32, tag);
}
memory::desc plain_bias(const ConvGeometry& g) { return memory::desc({g.c_out}, memory::data_type::f32, Tag::x); }

// The same shapes with the layout left to oneDNN.
memory::desc any_layout(const memory::desc& plain) {
  return memory::desc(plain.dims(), memory::data_type::f32, Tag::any);
}

// oneDNN counts dilation from 0 (no gaps) and takes the right/bottom padding
// separately; the symmetric padding we take yields the same output size,
// which oneDNN computes with the same floor division.
struct Window {
  memory::dims strides, dilates, padding;
};
Window window(const ConvGeometry& g) {
  return {spatial(g, g.stride_d, g.stride_h, g.stride_w), spatial(g, g.dil_d - 1, g.dil_h - 1, g.dil_w - 1),
          spatial(g, g.pad_d, g.pad_h, g.pad_w)};
}

dnnl::convolution_forward::primitive_desc forward_descriptor(const ConvGeometry& g, bool with_bias,
                                                             const dnnl::primitive_attr& attr = {}) {
  const Window win = window(g);
  const memory::desc x = any_layout(plain_x(g)), w = any_layout(plain_weight(g)), y = any_layout(plain_y(g));
  const auto desc =
      with_bias
          ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x,
                                            w, plain_bias(g), y, win.strides, win.dilates, win.padding, win.padding)
          : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x,
                                            w, y, win.strides, win.dilates, win.padding, win.padding);
  return dnnl::convolution_forward::primitive_desc(desc, attr, onednn_runtime().engine);
}

OnednnPrimitive build(Direction direction, const ConvGeometry& g, bool with_bias) {
  const dnnl::engine& engine = onednn_runtime().engine;
  const dnnl::primitive_attr attr = user_scratchpad();
  const Window win = window(g);
  switch (direction) {
    case Direction::kForward: {
      const auto pd = forward_descriptor(g, with_bias, attr);
      OnednnPrimitive conv{dnnl::convolution_forward(pd),
                           {plan_operand(DNNL_ARG_SRC, plain_x(g), pd.src_desc(), false),
                            plan_operand(DNNL_ARG_WEIGHTS, plain_weight(g), pd.weights_desc(), false),
                            plan_operand(DNNL_ARG_DST, plain_y(g), pd.dst_desc(), true)},
                           pd.scratchpad_desc()};
      if (with_bias) conv.operands.push_back(plan_operand(DNNL_ARG_BIAS, plain_bias(g), pd.bias_desc(), false));
      return conv;
    }
    case Direction::kBackwardData: {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, any_layout(plain_x(g)),
                                                       any_layout(plain_weight(g)), any_layout(plain_y(g)), win.strides,
                                                       win.dilates, win.padding, win.padding);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, attr, engine, forward_descriptor(g, false));
      return {dnnl::convolution_backward_data(pd),
              {plan_operand(DNNL_ARG_DIFF_DST, plain_y(g), pd.diff_dst_desc(), false),
               plan_operand(DNNL_ARG_WEIGHTS, plain_weight(g), pd.weights_desc(), false),
               plan_operand(DNNL_ARG_DIFF_SRC, plain_x(g), pd.diff_src_desc(), true)},
              pd.scratchpad_desc()};
    }
    case Direction::kBackwardWeights: {
      const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, any_layout(plain_x(g)),
                                                          any_layout(plain_weight(g)), any_layout(plain_y(g)),
                                                          win.strides, win.dilates, win.padding, win.padding);
      const dnnl::convolution_backward_weights::primitive_desc pd(desc, attr, engine, forward_descriptor(g, false));
      return {dnnl::convolution_backward_weights(pd),
              {plan_operand(DNNL_ARG_SRC, plain_x(g), pd.src_desc(), false),
               plan_operand(DNNL_ARG_DIFF_DST, plain_y(g), pd.diff_dst_desc(), false),
               plan_operand(DNNL_ARG_DIFF_WEIGHTS, plain_weight(g), pd.diff_weights_desc(), true)},
              pd.scratchpad_desc()};
    }
  }
  throw_error(absl::StatusCode::kInternal, "conv2d: unknown oneDNN direction");
}

using CacheKey = std::tuple<Direction, bool, ConvShapeKey>;  // with bias or not

OnednnCache<CacheKey, OnednnPrimitive>& primitive_cache() {
  static auto* cache = new OnednnCache<CacheKey, OnednnPrimitive>;
  return *cache;
}

// "[a, b, c]", for error messages.
std::string dims_text(const memory::dims& dims) { return absl::StrCat("[", absl::StrJoin(dims, ", "), "]"); }
std::string dims_text(const memory::desc& desc) { return dims_text(desc.dims()); }

// Runs one direction, turning a oneDNN failure into ts::Error.
void run(Direction direction, const ConvGeometry& g, bool with_bias,
         const std::unordered_map<int, const Tensor*>& tensors) {
  try {
    const CacheKey key{direction, with_bias, shape_key(g)};
    onednn_execute(*primitive_cache().get(key, [&] { return build(direction, g, with_bias); }), tensors);
  } catch (const dnnl::error& e) {
    const Window win = window(g);
    throw_onednn_error(e, g.spatial_dims == 3 ? "conv3d" : "conv2d", ": oneDNN ", direction_name(direction),
                       " failed for input ", dims_text(plain_x(g)), ", weight ", dims_text(plain_weight(g)),
                       ", stride ", dims_text(win.strides), ", padding ", dims_text(win.padding), ", dilation ",
                       dims_text(spatial(g, g.dil_d, g.dil_h, g.dil_w)), ", groups ", g.groups);
  }
}

}  // namespace

void onednn_conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                         const Tensor& out) {
  std::unordered_map<int, const Tensor*> tensors = {
      {DNNL_ARG_SRC, &x}, {DNNL_ARG_WEIGHTS, &weight}, {DNNL_ARG_DST, &out}};
  if (bias.defined()) tensors.emplace(DNNL_ARG_BIAS, &bias);
  run(Direction::kForward, g, bias.defined(), tensors);
}

void onednn_conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& grad_out,
                          const Tensor& grad_x, const Tensor& grad_weight) {
  if (grad_x.defined()) {
    run(Direction::kBackwardData, g, false,
        {{DNNL_ARG_DIFF_DST, &grad_out}, {DNNL_ARG_WEIGHTS, &weight}, {DNNL_ARG_DIFF_SRC, &grad_x}});
  }
  if (grad_weight.defined()) {
    run(Direction::kBackwardWeights, g, false,
        {{DNNL_ARG_SRC, &x}, {DNNL_ARG_DIFF_DST, &grad_out}, {DNNL_ARG_DIFF_WEIGHTS, &grad_weight}});
  }
}

}  // namespace ts::nn::functional
