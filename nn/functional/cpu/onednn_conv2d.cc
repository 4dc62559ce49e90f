// Each direction's oneDNN primitive is built once per (direction, shape,
// bias) and cached (onednn_runtime.h), as the cuDNN path caches its
// algorithm.
//
// oneDNN chooses the operands' internal layouts (format_tag::any, usually
// channel-blocked) while our tensors stay plain NCHW/OIHW, so every call
// reorders its operands in and its result out. Keeping activations blocked
// across a run of oneDNN ops, reordering only at the run's edges, is a later
// step of issue 14.
#include "nn/functional/cpu/onednn_conv2d.h"

#include <array>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

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

// The plain layouts of our tensors. Grouped weights [c_out, c_in / g, kh, kw]
// are, in memory, oneDNN's [g, c_out / g, c_in / g, kh, kw] (goihw).
memory::desc plain_x(const Conv2dGeometry& g) {
  return memory::desc({g.n, g.c_in, g.h, g.w}, memory::data_type::f32, Tag::nchw);
}
memory::desc plain_y(const Conv2dGeometry& g) {
  return memory::desc({g.n, g.c_out, g.out_h, g.out_w}, memory::data_type::f32, Tag::nchw);
}
memory::desc plain_weight(const Conv2dGeometry& g) {
  if (g.groups == 1) return memory::desc({g.c_out, g.c_in, g.kh, g.kw}, memory::data_type::f32, Tag::oihw);
  return memory::desc({g.groups, g.c_out / g.groups, g.c_in / g.groups, g.kh, g.kw}, memory::data_type::f32,
                      Tag::goihw);
}
memory::desc plain_bias(const Conv2dGeometry& g) { return memory::desc({g.c_out}, memory::data_type::f32, Tag::x); }

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
Window window(const Conv2dGeometry& g) {
  return {{g.stride_h, g.stride_w}, {g.dil_h - 1, g.dil_w - 1}, {g.pad_h, g.pad_w}};
}

// A primitive with the layouts it chose for its operands, keyed by DNNL_ARG_*.
struct ConvPrimitive {
  dnnl::primitive primitive;
  std::unordered_map<int, memory::desc> layouts;
};

dnnl::convolution_forward::primitive_desc forward_descriptor(const Conv2dGeometry& g, bool with_bias) {
  const Window win = window(g);
  const memory::desc x = any_layout(plain_x(g)), w = any_layout(plain_weight(g)), y = any_layout(plain_y(g));
  const auto desc =
      with_bias
          ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x,
                                            w, plain_bias(g), y, win.strides, win.dilates, win.padding, win.padding)
          : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x,
                                            w, y, win.strides, win.dilates, win.padding, win.padding);
  return dnnl::convolution_forward::primitive_desc(desc, onednn_runtime().engine);
}

ConvPrimitive build(Direction direction, const Conv2dGeometry& g, bool with_bias) {
  const dnnl::engine& engine = onednn_runtime().engine;
  const Window win = window(g);
  switch (direction) {
    case Direction::kForward: {
      const auto pd = forward_descriptor(g, with_bias);
      ConvPrimitive conv{
          dnnl::convolution_forward(pd),
          {{DNNL_ARG_SRC, pd.src_desc()}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_DST, pd.dst_desc()}}};
      if (with_bias) conv.layouts.emplace(DNNL_ARG_BIAS, pd.bias_desc());
      return conv;
    }
    case Direction::kBackwardData: {
      const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, any_layout(plain_x(g)),
                                                       any_layout(plain_weight(g)), any_layout(plain_y(g)), win.strides,
                                                       win.dilates, win.padding, win.padding);
      const dnnl::convolution_backward_data::primitive_desc pd(desc, engine, forward_descriptor(g, false));
      return {dnnl::convolution_backward_data(pd),
              {{DNNL_ARG_DIFF_SRC, pd.diff_src_desc()},
               {DNNL_ARG_WEIGHTS, pd.weights_desc()},
               {DNNL_ARG_DIFF_DST, pd.diff_dst_desc()}}};
    }
    case Direction::kBackwardWeights: {
      const dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, any_layout(plain_x(g)),
                                                          any_layout(plain_weight(g)), any_layout(plain_y(g)),
                                                          win.strides, win.dilates, win.padding, win.padding);
      const dnnl::convolution_backward_weights::primitive_desc pd(desc, engine, forward_descriptor(g, false));
      return {dnnl::convolution_backward_weights(pd),
              {{DNNL_ARG_SRC, pd.src_desc()},
               {DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc()},
               {DNNL_ARG_DIFF_DST, pd.diff_dst_desc()}}};
    }
  }
  throw_error(absl::StatusCode::kInternal, "conv2d: unknown oneDNN direction");
}

using CacheKey = std::tuple<Direction, bool, Conv2dShapeKey>;  // with bias or not

OnednnCache<CacheKey, ConvPrimitive>& primitive_cache() {
  static auto* cache = new OnednnCache<CacheKey, ConvPrimitive>;
  return *cache;
}

// An operand in our plain layout; outputs are written back after the run.
struct Operand {
  int arg;
  memory::desc plain;
  const Tensor* tensor;
  bool output;
};

// Runs `conv` on plain tensors, reordering each operand whose chosen layout
// differs into a oneDNN-owned buffer (and outputs back out).
void execute(const ConvPrimitive& conv, const std::vector<Operand>& operands) {
  OnednnRuntime& rt = onednn_runtime();
  std::lock_guard<std::mutex> lock(rt.mu);
  std::unordered_map<int, memory> args;
  std::vector<std::pair<memory, memory>> write_back;  // (internal, plain)
  for (const Operand& op : operands) {
    memory plain(op.plain, rt.engine, op.tensor->raw_data());
    const memory::desc& chosen = conv.layouts.at(op.arg);
    if (chosen == op.plain) {
      args.emplace(op.arg, plain);
      continue;
    }
    memory internal(chosen, rt.engine);
    if (op.output) {
      write_back.emplace_back(internal, plain);
    } else {
      dnnl::reorder(plain, internal).execute(rt.stream, plain, internal);
    }
    args.emplace(op.arg, internal);
  }
  conv.primitive.execute(rt.stream, args);
  for (auto& [internal, plain] : write_back) dnnl::reorder(internal, plain).execute(rt.stream, internal, plain);
  rt.stream.wait();
}

// Runs one direction, turning a oneDNN failure into ts::Error.
void run(Direction direction, const Conv2dGeometry& g, bool with_bias, const std::vector<Operand>& operands) {
  try {
    const CacheKey key{direction, with_bias, shape_key(g)};
    execute(*primitive_cache().get(key, [&] { return build(direction, g, with_bias); }), operands);
  } catch (const dnnl::error& e) {
    throw_onednn_error(e, "conv2d: oneDNN ", direction_name(direction), " failed for input [", g.n, ", ", g.c_in, ", ",
                       g.h, ", ", g.w, "], weight [", g.c_out, ", ", g.c_in / g.groups, ", ", g.kh, ", ", g.kw,
                       "], stride [", g.stride_h, ", ", g.stride_w, "], padding [", g.pad_h, ", ", g.pad_w,
                       "], dilation [", g.dil_h, ", ", g.dil_w, "], groups ", g.groups);
  }
}

}  // namespace

void onednn_conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                           const Tensor& out) {
  std::vector<Operand> operands = {{DNNL_ARG_SRC, plain_x(g), &x, false},
                                   {DNNL_ARG_WEIGHTS, plain_weight(g), &weight, false},
                                   {DNNL_ARG_DST, plain_y(g), &out, true}};
  if (bias.defined()) operands.push_back({DNNL_ARG_BIAS, plain_bias(g), &bias, false});
  run(Direction::kForward, g, bias.defined(), operands);
}

void onednn_conv2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& grad_out,
                            const Tensor& grad_x, const Tensor& grad_weight) {
  if (grad_x.defined()) {
    run(Direction::kBackwardData, g, false,
        {{DNNL_ARG_DIFF_DST, plain_y(g), &grad_out, false},
         {DNNL_ARG_WEIGHTS, plain_weight(g), &weight, false},
         {DNNL_ARG_DIFF_SRC, plain_x(g), &grad_x, true}});
  }
  if (grad_weight.defined()) {
    run(Direction::kBackwardWeights, g, false,
        {{DNNL_ARG_SRC, plain_x(g), &x, false},
         {DNNL_ARG_DIFF_DST, plain_y(g), &grad_out, false},
         {DNNL_ARG_DIFF_WEIGHTS, plain_weight(g), &grad_weight, true}});
  }
}

}  // namespace ts::nn::functional
