#include "nn/functional/cpu/onednn_lstm.h"

#include <tuple>
#include <unordered_map>

#include "nn/functional/cpu/onednn_runtime.h"
#include "tensor/ops.h"

namespace ts::nn::functional {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

struct LstmShape {
  int64_t steps, batch, input, hidden;
  bool reverse;
  auto key() const { return std::make_tuple(steps, batch, input, hidden, reverse); }
};

// Our tensors' layouts, as oneDNN names them.
struct PlainDescs {
  memory::desc x, state, weight_ih, weight_hh, bias, output;
  explicit PlainDescs(const LstmShape& s)
      : x({s.steps, s.batch, s.input}, kF32, Tag::tnc),
        state({1, 1, s.batch, s.hidden}, kF32, Tag::ldnc),
        weight_ih({1, 1, s.input, 4, s.hidden}, kF32, Tag::ldgoi),
        weight_hh({1, 1, s.hidden, 4, s.hidden}, kF32, Tag::ldgoi),
        bias({1, 1, 4, s.hidden}, kF32, Tag::ldgo),
        output({s.steps, s.batch, s.hidden}, kF32, Tag::tnc) {}
};

memory::desc any_layout(const memory::desc& plain) { return memory::desc(plain.dims(), kF32, Tag::any); }

dnnl::rnn_direction direction(const LstmShape& s) {
  return s.reverse ? dnnl::rnn_direction::unidirectional_right2left : dnnl::rnn_direction::unidirectional_left2right;
}

dnnl::lstm_forward::primitive_desc forward_descriptor(const LstmShape& s, const dnnl::primitive_attr& attr = {}) {
  const PlainDescs d(s);
  return dnnl::lstm_forward::primitive_desc(
      dnnl::lstm_forward::desc(dnnl::prop_kind::forward_training, direction(s), d.x, d.state, d.state,
                               any_layout(d.weight_ih), any_layout(d.weight_hh), d.bias, d.output, d.state, d.state),
      attr, onednn_runtime().engine);
}

struct LstmPrimitives {
  OnednnPrimitive forward, backward;
  memory::desc workspace;
};

LstmPrimitives build(const LstmShape& s) {
  const PlainDescs d(s);
  const dnnl::primitive_attr attr = user_scratchpad();
  const auto fwd = forward_descriptor(s, attr);
  const dnnl::lstm_backward::desc backward_desc(dnnl::prop_kind::backward, direction(s), d.x, d.state, d.state,
                                                any_layout(d.weight_ih), any_layout(d.weight_hh), d.bias, d.output,
                                                d.state, d.state, d.x, d.state, d.state, any_layout(d.weight_ih),
                                                any_layout(d.weight_hh), d.bias, d.output, d.state, d.state);
  const dnnl::lstm_backward::primitive_desc bwd(backward_desc, attr, onednn_runtime().engine, forward_descriptor(s));
  const memory::desc workspace = fwd.workspace_desc();
  LstmPrimitives p;
  p.workspace = workspace;
  p.forward = {dnnl::lstm_forward(fwd),
               {plan_operand(DNNL_ARG_SRC_LAYER, d.x, fwd.src_layer_desc(), false),
                plan_operand(DNNL_ARG_SRC_ITER, d.state, fwd.src_iter_desc(), false),
                plan_operand(DNNL_ARG_SRC_ITER_C, d.state, fwd.src_iter_c_desc(), false),
                plan_operand(DNNL_ARG_WEIGHTS_LAYER, d.weight_ih, fwd.weights_layer_desc(), false),
                plan_operand(DNNL_ARG_WEIGHTS_ITER, d.weight_hh, fwd.weights_iter_desc(), false),
                plan_operand(DNNL_ARG_BIAS, d.bias, fwd.bias_desc(), false),
                plan_operand(DNNL_ARG_DST_LAYER, d.output, fwd.dst_layer_desc(), true),
                plan_operand(DNNL_ARG_DST_ITER, d.state, fwd.dst_iter_desc(), true),
                plan_operand(DNNL_ARG_DST_ITER_C, d.state, fwd.dst_iter_c_desc(), true),
                plan_operand(DNNL_ARG_WORKSPACE, workspace, workspace, true)},
               fwd.scratchpad_desc()};
  p.backward = {dnnl::lstm_backward(bwd),
                {plan_operand(DNNL_ARG_SRC_LAYER, d.x, bwd.src_layer_desc(), false),
                 plan_operand(DNNL_ARG_SRC_ITER, d.state, bwd.src_iter_desc(), false),
                 plan_operand(DNNL_ARG_SRC_ITER_C, d.state, bwd.src_iter_c_desc(), false),
                 plan_operand(DNNL_ARG_WEIGHTS_LAYER, d.weight_ih, bwd.weights_layer_desc(), false),
                 plan_operand(DNNL_ARG_WEIGHTS_ITER, d.weight_hh, bwd.weights_iter_desc(), false),
                 plan_operand(DNNL_ARG_BIAS, d.bias, bwd.bias_desc(), false),
                 plan_operand(DNNL_ARG_DST_LAYER, d.output, bwd.dst_layer_desc(), false),
                 plan_operand(DNNL_ARG_DST_ITER, d.state, bwd.dst_iter_desc(), false),
                 plan_operand(DNNL_ARG_DST_ITER_C, d.state, bwd.dst_iter_c_desc(), false),
                 plan_operand(DNNL_ARG_WORKSPACE, workspace, workspace, false),
                 plan_operand(DNNL_ARG_DIFF_DST_LAYER, d.output, bwd.diff_dst_layer_desc(), false),
                 plan_operand(DNNL_ARG_DIFF_DST_ITER, d.state, bwd.diff_dst_iter_desc(), false),
                 plan_operand(DNNL_ARG_DIFF_DST_ITER_C, d.state, bwd.diff_dst_iter_c_desc(), false),
                 plan_operand(DNNL_ARG_DIFF_SRC_LAYER, d.x, bwd.diff_src_layer_desc(), true),
                 plan_operand(DNNL_ARG_DIFF_SRC_ITER, d.state, bwd.diff_src_iter_desc(), true),
                 plan_operand(DNNL_ARG_DIFF_SRC_ITER_C, d.state, bwd.diff_src_iter_c_desc(), true),
                 // oneDNN adds the weight gradients into these.
                 plan_operand(DNNL_ARG_DIFF_WEIGHTS_LAYER, d.weight_ih, bwd.diff_weights_layer_desc(), true, true),
                 plan_operand(DNNL_ARG_DIFF_WEIGHTS_ITER, d.weight_hh, bwd.diff_weights_iter_desc(), true, true),
                 plan_operand(DNNL_ARG_DIFF_BIAS, d.bias, bwd.diff_bias_desc(), true, true)},
                bwd.scratchpad_desc()};
  return p;
}

const LstmPrimitives& primitives(const LstmShape& s) {
  static auto* cache = new OnednnCache<decltype(s.key()), LstmPrimitives>;
  return *cache->get(s.key(), [&] { return build(s); });
}

LstmShape shape_of(const Tensor& x, const Tensor& h0, bool reverse) {
  return {x.size(0), x.size(1), x.size(2), h0.size(1), reverse};
}

template <typename Run>
void guarded(const LstmShape& s, const char* what, Run run) {
  try {
    run();
  } catch (const dnnl::error& e) {
    throw_onednn_error(e, "lstm: oneDNN ", what, " failed for input [", s.steps, ", ", s.batch, ", ", s.input,
                       "], hidden ", s.hidden, s.reverse ? ", reverse" : "");
  }
}

}  // namespace

OnednnLstmForward onednn_lstm_forward(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& weight_ih,
                                      const Tensor& weight_hh, const Tensor& bias, bool reverse) {
  const LstmShape s = shape_of(x, h0, reverse);
  const TensorOptions f32{DType::kF32, Device::cpu()};
  OnednnLstmForward out;
  out.output = empty({s.steps, s.batch, s.hidden}, f32);
  out.h = empty({s.batch, s.hidden}, f32);
  out.c = empty({s.batch, s.hidden}, f32);
  guarded(s, "forward", [&] {
    const LstmPrimitives& p = primitives(s);
    out.workspace = empty({static_cast<int64_t>(p.workspace.get_size())}, {DType::kU8, Device::cpu()});
    onednn_execute(p.forward, {{DNNL_ARG_SRC_LAYER, &x},
                               {DNNL_ARG_SRC_ITER, &h0},
                               {DNNL_ARG_SRC_ITER_C, &c0},
                               {DNNL_ARG_WEIGHTS_LAYER, &weight_ih},
                               {DNNL_ARG_WEIGHTS_ITER, &weight_hh},
                               {DNNL_ARG_BIAS, &bias},
                               {DNNL_ARG_DST_LAYER, &out.output},
                               {DNNL_ARG_DST_ITER, &out.h},
                               {DNNL_ARG_DST_ITER_C, &out.c},
                               {DNNL_ARG_WORKSPACE, &out.workspace}});
  });
  return out;
}

OnednnLstmGradients onednn_lstm_backward(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& weight_ih,
                                         const Tensor& weight_hh, const Tensor& bias, bool reverse,
                                         const OnednnLstmForward& forward, const Tensor& grad_output,
                                         const Tensor& grad_h, const Tensor& grad_c) {
  const LstmShape s = shape_of(x, h0, reverse);
  const TensorOptions f32{DType::kF32, Device::cpu()};
  OnednnLstmGradients g;
  g.x = empty(x.shape(), f32);
  g.h0 = empty(h0.shape(), f32);
  g.c0 = empty(c0.shape(), f32);
  g.weight_ih = empty(weight_ih.shape(), f32);
  g.weight_hh = empty(weight_hh.shape(), f32);
  g.bias = empty(bias.shape(), f32);
  guarded(s, "backward", [&] {
    onednn_execute(primitives(s).backward, {{DNNL_ARG_SRC_LAYER, &x},
                                            {DNNL_ARG_SRC_ITER, &h0},
                                            {DNNL_ARG_SRC_ITER_C, &c0},
                                            {DNNL_ARG_WEIGHTS_LAYER, &weight_ih},
                                            {DNNL_ARG_WEIGHTS_ITER, &weight_hh},
                                            {DNNL_ARG_BIAS, &bias},
                                            {DNNL_ARG_DST_LAYER, &forward.output},
                                            {DNNL_ARG_DST_ITER, &forward.h},
                                            {DNNL_ARG_DST_ITER_C, &forward.c},
                                            {DNNL_ARG_WORKSPACE, &forward.workspace},
                                            {DNNL_ARG_DIFF_DST_LAYER, &grad_output},
                                            {DNNL_ARG_DIFF_DST_ITER, &grad_h},
                                            {DNNL_ARG_DIFF_DST_ITER_C, &grad_c},
                                            {DNNL_ARG_DIFF_SRC_LAYER, &g.x},
                                            {DNNL_ARG_DIFF_SRC_ITER, &g.h0},
                                            {DNNL_ARG_DIFF_SRC_ITER_C, &g.c0},
                                            {DNNL_ARG_DIFF_WEIGHTS_LAYER, &g.weight_ih},
                                            {DNNL_ARG_DIFF_WEIGHTS_ITER, &g.weight_hh},
                                            {DNNL_ARG_DIFF_BIAS, &g.bias}});
  });
  return g;
}

}  // namespace ts::nn::functional
