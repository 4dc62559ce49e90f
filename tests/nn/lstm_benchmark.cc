// One LSTM layer forward + backward (input, state and weight gradients) on
// the CPU at AWD-LSTM's first-layer size (input 400, hidden 1150, bptt 70)
// for a batch of 20 and of 80 (MLBench's per-worker batch), in tokens/s:
// ours (nn::LSTM), and as the peer in the same binary oneDNN's LSTM
// primitives (lstm_forward in training mode, lstm_backward) on the same
// weights, with what a layer built on them would do each step: reorder the
// weights into the primitives' formats, zero the weight gradients (oneDNN
// accumulates into them), run forward and backward. Before timing, the peer's
// output is checked against ours, so both compute the same layer.
// `tools/golden/lstm_torch.py step-time` times PyTorch's peer.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "autograd/ops.h"
#include "dnnl.hpp"
#include "nn/lstm.h"
#include "tensor/ops.h"

namespace ts::nn {
namespace {

constexpr int64_t kSteps = 70, kInput = 400, kHidden = 1150;

void BM_LstmForwardBackward(benchmark::State& state) {
  const int64_t batch = state.range(0);
  LSTM lstm(kInput, kHidden);
  const autograd::Variable x(randn({kSteps, batch, kInput}), true);
  for (auto _ : state) {
    const LstmOutput out = lstm.forward(x);
    autograd::sum(out.output).backward();
    benchmark::DoNotOptimize(x.grad().raw_data());
    x.clear_grad();
    lstm.zero_grad();
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(kSteps * batch), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LstmForwardBackward)->Arg(20)->Arg(80)->Unit(benchmark::kMillisecond)->UseRealTime();

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

// oneDNN's LSTM over our layer's weights: weight_ih [4H, I] is ldigo's
// [I, 4, H] transposed (the gate order i, f, g, o is the same), and its one
// bias is bias_ih + bias_hh.
class OnednnLstm {
 public:
  OnednnLstm(const LSTM& lstm, int64_t batch) : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    std::unordered_map<std::string, Tensor> p;
    for (const auto& [name, v] : lstm.named_parameters()) p[name] = v.data();
    weights_layer_ = user(p.at("weight_ih_l0").transpose(0, 1), {1, 1, kInput, 4, kHidden}, Tag::ldigo);
    weights_iter_ = user(p.at("weight_hh_l0").transpose(0, 1), {1, 1, kHidden, 4, kHidden}, Tag::ldigo);
    bias_ = user(p.at("bias_ih_l0") + p.at("bias_hh_l0"), {1, 1, 4, kHidden}, Tag::ldgo);
    const memory::desc src({kSteps, batch, kInput}, kF32, Tag::tnc), dst({kSteps, batch, kHidden}, kF32, Tag::tnc);
    const memory::desc wl_any({1, 1, kInput, 4, kHidden}, kF32, Tag::any);
    const memory::desc wi_any({1, 1, kHidden, 4, kHidden}, kF32, Tag::any);
    const memory::desc none;
    const auto direction = dnnl::rnn_direction::unidirectional_left2right;
    forward_pd_ = dnnl::lstm_forward::primitive_desc(
        dnnl::lstm_forward::desc(dnnl::prop_kind::forward_training, direction, src, none, none, wl_any, wi_any,
                                 bias_.get_desc(), dst, none, none),
        engine_);
    backward_pd_ = dnnl::lstm_backward::primitive_desc(
        dnnl::lstm_backward::desc(dnnl::prop_kind::backward, direction, src, none, none, wl_any, wi_any,
                                  bias_.get_desc(), dst, none, none, src, none, none, wl_any, wi_any,
                                  bias_.get_desc(), dst, none, none),
        engine_, forward_pd_);
    src_ = memory(src, engine_);
    dst_ = memory(dst, engine_);
    diff_src_ = memory(src, engine_);
    diff_dst_ = memory(dst, engine_);
    workspace_ = memory(forward_pd_.workspace_desc(), engine_);
    fwd_weights_layer_ = memory(forward_pd_.weights_layer_desc(), engine_);
    fwd_weights_iter_ = memory(forward_pd_.weights_iter_desc(), engine_);
    bwd_weights_layer_ = memory(backward_pd_.weights_layer_desc(), engine_);
    bwd_weights_iter_ = memory(backward_pd_.weights_iter_desc(), engine_);
    diff_weights_layer_ = memory(backward_pd_.diff_weights_layer_desc(), engine_);
    diff_weights_iter_ = memory(backward_pd_.diff_weights_iter_desc(), engine_);
    diff_bias_ = memory(backward_pd_.diff_bias_desc(), engine_);
    std::fill_n(static_cast<float*>(diff_dst_.get_data_handle()), kSteps * batch * kHidden, 1.0f);
  }

  // Forward (into dst) and backward of sum(output), as the benchmark of ours.
  void run(const Tensor& x) {
    std::memcpy(src_.get_data_handle(), x.raw_data(), x.numel() * sizeof(float));
    dnnl::reorder(weights_layer_, fwd_weights_layer_).execute(stream_, weights_layer_, fwd_weights_layer_);
    dnnl::reorder(weights_iter_, fwd_weights_iter_).execute(stream_, weights_iter_, fwd_weights_iter_);
    dnnl::lstm_forward(forward_pd_)
        .execute(stream_, {{DNNL_ARG_SRC_LAYER, src_},
                           {DNNL_ARG_WEIGHTS_LAYER, fwd_weights_layer_},
                           {DNNL_ARG_WEIGHTS_ITER, fwd_weights_iter_},
                           {DNNL_ARG_BIAS, bias_},
                           {DNNL_ARG_DST_LAYER, dst_},
                           {DNNL_ARG_WORKSPACE, workspace_}});
    dnnl::reorder(weights_layer_, bwd_weights_layer_).execute(stream_, weights_layer_, bwd_weights_layer_);
    dnnl::reorder(weights_iter_, bwd_weights_iter_).execute(stream_, weights_iter_, bwd_weights_iter_);
    for (const memory* m : {&diff_weights_layer_, &diff_weights_iter_, &diff_bias_}) {
      std::memset(m->get_data_handle(), 0, m->get_desc().get_size());
    }
    dnnl::lstm_backward(backward_pd_)
        .execute(stream_, {{DNNL_ARG_SRC_LAYER, src_},
                           {DNNL_ARG_WEIGHTS_LAYER, bwd_weights_layer_},
                           {DNNL_ARG_WEIGHTS_ITER, bwd_weights_iter_},
                           {DNNL_ARG_BIAS, bias_},
                           {DNNL_ARG_DST_LAYER, dst_},
                           {DNNL_ARG_DIFF_DST_LAYER, diff_dst_},
                           {DNNL_ARG_WORKSPACE, workspace_},
                           {DNNL_ARG_DIFF_SRC_LAYER, diff_src_},
                           {DNNL_ARG_DIFF_WEIGHTS_LAYER, diff_weights_layer_},
                           {DNNL_ARG_DIFF_WEIGHTS_ITER, diff_weights_iter_},
                           {DNNL_ARG_DIFF_BIAS, diff_bias_}});
    stream_.wait();
  }

  const float* output() const { return static_cast<const float*>(dst_.get_data_handle()); }

 private:
  // A plain memory holding `values` (copied) in the given layout.
  memory user(const Tensor& values, const memory::dims& dims, Tag tag) {
    const Tensor dense = contiguous(values);
    memory m(memory::desc(dims, kF32, tag), engine_);
    std::memcpy(m.get_data_handle(), dense.raw_data(), dense.numel() * sizeof(float));
    return m;
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::lstm_forward::primitive_desc forward_pd_;
  dnnl::lstm_backward::primitive_desc backward_pd_;
  memory weights_layer_, weights_iter_, bias_;
  memory src_, dst_, diff_src_, diff_dst_, workspace_;
  memory fwd_weights_layer_, fwd_weights_iter_, bwd_weights_layer_, bwd_weights_iter_;
  memory diff_weights_layer_, diff_weights_iter_, diff_bias_;
};

void BM_OnednnLstmForwardBackward(benchmark::State& state) {
  const int64_t batch = state.range(0);
  LSTM lstm(kInput, kHidden);
  const Tensor x = randn({kSteps, batch, kInput});
  OnednnLstm peer(lstm, batch);
  peer.run(x);
  const std::vector<float> ours = to_vector<float>(lstm.forward(autograd::Variable(x)).output.data());
  double worst = 0;
  for (size_t i = 0; i < ours.size(); ++i) worst = std::max(worst, std::abs(double(ours[i]) - peer.output()[i]));
  if (worst > 1e-4) {
    state.SkipWithError("oneDNN's LSTM output differs from ours: not the same layer");
    return;
  }
  for (auto _ : state) {
    peer.run(x);
    benchmark::DoNotOptimize(peer.output());
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(kSteps * batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["max_abs_diff"] = worst;
}
BENCHMARK(BM_OnednnLstmForwardBackward)->Arg(20)->Arg(80)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ts::nn

BENCHMARK_MAIN();
