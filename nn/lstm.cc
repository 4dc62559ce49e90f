#include "nn/lstm.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/function.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "nn/dropout.h"
#include "nn/functional/cpu/onednn_lstm.h"
#include "nn/functional/cpu_reference_path.h"
#include "tensor/ops.h"

namespace ts::nn {
namespace {

// The lengths of a padded batch as a vector, checked: i64 [batch] on the
// CPU, each in [1, steps].
std::vector<int64_t> checked_lengths(const Tensor& lengths, int64_t steps, int64_t batch) {
  TS_CHECK(
      lengths.dtype() == DType::kI64 && lengths.dim() == 1 && lengths.size(0) == batch && lengths.device().is_cpu(),
      "LSTM: lengths must be i64[", batch, "] on the CPU, got ", lengths.describe());
  std::vector<int64_t> len = to_vector<int64_t>(lengths);
  for (int64_t b = 0; b < batch; ++b) {
    TS_CHECK(len[b] >= 1 && len[b] <= steps, "LSTM: length ", len[b], " of sequence ", b, " is not in [1, ", steps,
             "]");
  }
  return len;
}

// mask[t][b][0] = 1 while t < lengths[b], else 0: [T, B, 1] in x's dtype and
// on its device.
Tensor length_mask(const std::vector<int64_t>& lengths, int64_t steps, const Tensor& like) {
  const int64_t batch = static_cast<int64_t>(lengths.size());
  std::vector<double> mask(steps * batch);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < lengths[b]; ++t) mask[t * batch + b] = 1;
  }
  return to(from_vector<double>(mask, {steps, batch, 1}, like.device()), like.dtype());
}

// One layer in one direction's outputs: [T, B, hidden] and the final h, c.
struct Direction {
  Variable output, h, c;
};

// lstm_direction on oneDNN's LSTM primitives (f32 on the CPU, without padded
// lengths, which they do not take): one forward that keeps its workspace
// for the one backward. The two biases enter as their sum, so each gets the
// bias gradient.
Direction onednn_lstm_direction(const Variable& x, const Variable& h0, const Variable& c0, const Variable& w_ih,
                                const Variable& w_hh, const Variable& b_ih, const Variable& b_hh, bool reverse) {
  const Tensor input = contiguous(x.data()), h_start = contiguous(h0.data()), c_start = contiguous(c0.data());
  const Tensor weight_ih = contiguous(w_ih.data()), weight_hh = contiguous(w_hh.data());
  const int64_t hidden = h0.size(1);
  const bool with_bias = b_ih.defined();
  const Tensor bias = with_bias ? contiguous(b_ih.data() + b_hh.data()) : zeros({4 * hidden}, {DType::kF32});
  const functional::OnednnLstmForward forward =
      functional::onednn_lstm_forward(input, h_start, c_start, weight_ih, weight_hh, bias, reverse);
  std::vector<autograd::Variable> inputs = {x, h0, c0, w_ih, w_hh};
  if (with_bias) inputs.insert(inputs.end(), {b_ih, b_hh});
  std::vector<Variable> outs =
      autograd::record("lstm", inputs, {forward.output, forward.h, forward.c}, [=](const autograd::GradContext& ctx) {
        const auto grad_or_zeros = [&](size_t k, const Tensor& like) {
          return ctx.grad(k).defined() ? contiguous(ctx.grad(k)) : zeros(like.shape(), {DType::kF32});
        };
        const functional::OnednnLstmGradients g = functional::onednn_lstm_backward(
            input, h_start, c_start, weight_ih, weight_hh, bias, reverse, forward, grad_or_zeros(0, forward.output),
            grad_or_zeros(1, forward.h), grad_or_zeros(2, forward.c));
        std::vector<Tensor> grads = {g.x, g.h0, g.c0, g.weight_ih, g.weight_hh};
        if (with_bias) grads.insert(grads.end(), {g.bias, g.bias});
        return grads;
      });
  return {outs[0], outs[1], outs[2]};
}

// One layer in one direction as one recorded op (inputs x [T, B, in], h0
// and c0 [B, hidden], weight_ih, weight_hh and, with bias, bias_ih and
// bias_hh). f32 on the CPU runs on oneDNN (above) unless the lengths are
// padded or TS_CPU_REFERENCE=1; otherwise, the reference for f64 and the
// path on CUDA: the forward projects all steps' inputs with one GEMM and
// takes one recurrent GEMM per step, saving each step's gates; the
// backward runs the steps in reverse for the gate gradients, then forms the
// input and weight gradients of all steps at once with one GEMM each.
// `mask` [T, B, 1] (or undefined) freezes a sequence's state past its
// length and zeroes its output there.
Direction lstm_direction(const Variable& x, const Variable& h0, const Variable& c0, const Variable& w_ih,
                         const Variable& w_hh, const Variable& b_ih, const Variable& b_hh, const Tensor& mask,
                         bool reverse) {
  if (x.dtype() == DType::kF32 && x.device().is_cpu() && !mask.defined() && !functional::cpu_reference_path()) {
    return onednn_lstm_direction(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse);
  }
  const Tensor input = contiguous(x.data());
  const Tensor weight_ih = w_ih.data(), weight_hh = w_hh.data();
  const int64_t steps = input.size(0), batch = input.size(1), in = input.size(2), hidden = h0.size(1);
  const TensorOptions like{input.dtype(), input.device()};
  Tensor projected = matmul(input.view({steps * batch, in}), weight_ih.transpose(0, 1));
  if (b_ih.defined()) projected = projected + (b_ih.data() + b_hh.data());
  projected = projected.view({steps, batch, 4 * hidden});
  const Tensor weight_hh_t = weight_hh.transpose(0, 1);
  // Saved for the backward, per time step: the activated gates (i, f, g, o),
  // tanh(c), and the state the step started from.
  const Tensor gates = empty({steps, batch, 4 * hidden}, like);
  const Tensor tanh_c = empty({steps, batch, hidden}, like);
  const Tensor c_prev = empty({steps, batch, hidden}, like);
  const Tensor h_prev = empty({steps, batch, hidden}, like);
  const Tensor output = empty({steps, batch, hidden}, like);
  Tensor h = h0.data(), c = c0.data();
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = reverse ? steps - 1 - s : s;
    const Tensor pre = projected.select(0, t) + matmul(h, weight_hh_t);
    const Tensor i = sigmoid(pre.narrow(1, 0, hidden)), f = sigmoid(pre.narrow(1, hidden, hidden));
    const Tensor g = tanh(pre.narrow(1, 2 * hidden, hidden)), o = sigmoid(pre.narrow(1, 3 * hidden, hidden));
    const Tensor c_next = f * c + i * g;
    const Tensor tc = tanh(c_next);
    const Tensor h_next = o * tc;
    copy_(gates.select(0, t), cat({i, f, g, o}, 1));
    copy_(tanh_c.select(0, t), tc);
    copy_(c_prev.select(0, t), c);
    copy_(h_prev.select(0, t), h);
    if (mask.defined()) {
      // m * next + (1 - m) * kept is exact: one of the two products is 0.
      const Tensor m = mask.select(0, t);
      c = c_next * m + c * (1.0 - m);
      h = h_next * m + h * (1.0 - m);
      copy_(output.select(0, t), h_next * m);
    } else {
      c = c_next;
      h = h_next;
      copy_(output.select(0, t), h_next);
    }
  }
  const bool with_bias = b_ih.defined();
  std::vector<autograd::Variable> inputs = {x, h0, c0, w_ih, w_hh};
  if (with_bias) inputs.insert(inputs.end(), {b_ih, b_hh});
  std::vector<Variable> outs = autograd::record("lstm", inputs, {output, h, c}, [=](const autograd::GradContext& ctx) {
    const auto grad_or_zeros = [&](size_t k, Dims shape) {
      return ctx.grad(k).defined() ? ctx.grad(k) : zeros(shape, like);
    };
    const Tensor d_output = grad_or_zeros(0, {steps, batch, hidden});
    Tensor dh = grad_or_zeros(1, {batch, hidden}), dc = grad_or_zeros(2, {batch, hidden});
    const Tensor d_pre = empty({steps, batch, 4 * hidden}, like);
    for (int64_t s = steps - 1; s >= 0; --s) {
      const int64_t t = reverse ? steps - 1 - s : s;
      Tensor dh_next = dh + d_output.select(0, t), dc_next = dc;
      Tensor dh_kept, dc_kept;  // what flows past a masked step unchanged
      if (mask.defined()) {
        const Tensor m = mask.select(0, t);
        dh_kept = dh * (1.0 - m);
        dc_kept = dc * (1.0 - m);
        dh_next = dh_next * m;
        dc_next = dc_next * m;
      }
      const Tensor gt = gates.select(0, t), tc = tanh_c.select(0, t);
      const Tensor i = gt.narrow(1, 0, hidden), f = gt.narrow(1, hidden, hidden);
      const Tensor g = gt.narrow(1, 2 * hidden, hidden), o = gt.narrow(1, 3 * hidden, hidden);
      const Tensor dc_total = dc_next + dh_next * o * (1.0 - tc * tc);
      const Tensor d_i = dc_total * g * i * (1.0 - i);
      const Tensor d_f = dc_total * c_prev.select(0, t) * f * (1.0 - f);
      const Tensor d_g = dc_total * i * (1.0 - g * g);
      const Tensor d_o = dh_next * tc * o * (1.0 - o);
      const Tensor d_gates = cat({d_i, d_f, d_g, d_o}, 1);
      copy_(d_pre.select(0, t), d_gates);
      dh = matmul(d_gates, weight_hh);
      dc = dc_total * f;
      if (mask.defined()) {
        dh = dh + dh_kept;
        dc = dc + dc_kept;
      }
    }
    const Tensor d_pre_rows = d_pre.view({steps * batch, 4 * hidden});
    std::vector<Tensor> grads = {
        ctx.needs(0) ? matmul(d_pre_rows, weight_ih).view({steps, batch, in}) : Tensor(), dh, dc,
        ctx.needs(3) ? matmul(d_pre_rows.transpose(0, 1), input.view({steps * batch, in})) : Tensor(),
        ctx.needs(4) ? matmul(d_pre_rows.transpose(0, 1), h_prev.view({steps * batch, hidden})) : Tensor()};
    if (with_bias) {
      const Tensor d_bias = sum(d_pre_rows, {0});
      grads.push_back(d_bias);
      grads.push_back(d_bias);
    }
    return grads;
  });
  return {outs[0], outs[1], outs[2]};
}

}  // namespace

std::string LSTM::param_name(const char* kind, int64_t layer, bool reverse) {
  return absl::StrCat(kind, "_l", layer, reverse ? "_reverse" : "");
}

LSTM::LSTM(int64_t input_size, int64_t hidden_size, LstmOptions options)
    : Module("LSTM"), input_size_(input_size), hidden_size_(hidden_size), options_(options) {
  TS_CHECK(input_size > 0 && hidden_size > 0 && options.num_layers > 0, "LSTM(input_size=", input_size,
           ", hidden_size=", hidden_size, ", num_layers=", options.num_layers, "): sizes must be positive");
  TS_CHECK(options.dropout >= 0 && options.dropout <= 1, "LSTM: dropout ", options.dropout, " must be in [0, 1]");
  TS_CHECK(options.weight_drop >= 0 && options.weight_drop < 1, "LSTM: weight_drop ", options.weight_drop,
           " must be in [0, 1)");
  const double bound = 1 / std::sqrt(static_cast<double>(hidden_size));
  const int64_t directions = options.bidirectional ? 2 : 1;
  for (int64_t layer = 0; layer < options.num_layers; ++layer) {
    const int64_t layer_input = layer == 0 ? input_size : hidden_size * directions;
    for (int64_t d = 0; d < directions; ++d) {
      const bool reverse = d == 1;
      register_parameter(param_name("weight_ih", layer, reverse),
                         uniform({4 * hidden_size, layer_input}, -bound, bound));
      register_parameter(param_name("weight_hh", layer, reverse),
                         uniform({4 * hidden_size, hidden_size}, -bound, bound));
      if (options.bias) {
        register_parameter(param_name("bias_ih", layer, reverse), uniform({4 * hidden_size}, -bound, bound));
        register_parameter(param_name("bias_hh", layer, reverse), uniform({4 * hidden_size}, -bound, bound));
      }
    }
  }
}

functional::CudnnLstmShape LSTM::cudnn_shape(int64_t layer, DType dtype, Device device) const {
  return {.input_size = layer == 0 ? input_size_ : hidden_size_ * directions(),
          .hidden_size = hidden_size_,
          .bidirectional = options_.bidirectional,
          .bias = options_.bias,
          .dtype = dtype,
          .device = device.index};
}

LSTM::DirectionWeights LSTM::direction_weights(int64_t layer, bool reverse) const {
  DirectionWeights w{param(param_name("weight_ih", layer, reverse)), param(param_name("weight_hh", layer, reverse)),
                     Variable(), Variable()};
  if (is_training() && options_.weight_drop > 0) w.weight_hh = dropout(w.weight_hh, options_.weight_drop);
  if (options_.bias) {
    w.bias_ih = param(param_name("bias_ih", layer, reverse));
    w.bias_hh = param(param_name("bias_hh", layer, reverse));
  }
  return w;
}

void LSTM::placement_changed() {
  cudnn_ = {};
  const Tensor& first = param(param_name("weight_ih", 0, false)).data();
  if (!first.device().is_cuda() || !functional::cudnn_lstm_supports(first.dtype())) return;
  // cuDNN wants its weight space aligned; 256 bytes is what cudaMalloc gives.
  const int64_t align = 256 / dtype_size(first.dtype());
  int64_t total = 0;
  for (int64_t layer = 0; layer < options_.num_layers; ++layer) {
    cudnn_.layer_offset.push_back(total);
    cudnn_.layout.push_back(functional::cudnn_lstm_layout(cudnn_shape(layer, first.dtype(), first.device())));
    total += (cudnn_.layout.back().numel + align - 1) / align * align;
  }
  cudnn_.buffer = empty({total}, {first.dtype(), first.device()});
  for (int64_t layer = 0; layer < options_.num_layers; ++layer) {
    for (int64_t d = 0; d < directions(); ++d) {
      const functional::CudnnLstmSlots& slots = cudnn_.layout[layer].directions[d];
      const auto move_in = [&](const char* kind, int64_t slot) {
        const Variable& p = param(param_name(kind, layer, d == 1));
        const Tensor view = cudnn_.buffer.narrow(0, cudnn_.layer_offset[layer] + slot, p.numel()).view(p.shape());
        copy_(view, p.data());
        p.set_data(view);
      };
      move_in("weight_ih", slots.weight_ih);
      move_in("weight_hh", slots.weight_hh);
      if (options_.bias) {
        move_in("bias_ih", slots.bias_ih);
        move_in("bias_hh", slots.bias_hh);
      }
    }
  }
}

bool LSTM::runs_on_cudnn(const Variable& x) const {
  return cudnn_.buffer.defined() && x.device() == cudnn_.buffer.device() && x.dtype() == cudnn_.buffer.dtype();
}

LSTM::LayerOutput LSTM::cudnn_layer(int64_t layer, const Variable& x, const Variable& h0, const Variable& c0,
                                    const std::vector<DirectionWeights>& weights,
                                    const std::vector<int64_t>& lengths) const {
  const functional::CudnnLstmShape shape = cudnn_shape(layer, x.dtype(), x.device());
  const functional::CudnnLstmLayout& layout = cudnn_.layout[layer];
  const Tensor block = cudnn_.buffer.narrow(0, cudnn_.layer_offset[layer], layout.numel);
  // The weight space is the layer's block of the buffer while every weight
  // is its view there. A weight that is not (weight_hh after weight drop, a
  // parameter replaced by set_parameter) is written over its slot in a copy
  // of the block: one device copy, no re-packing of the others.
  Tensor space = block;
  std::vector<Variable> inputs = {x, h0, c0};
  struct WeightInput {
    int64_t slot;
    Shape shape;
  };
  std::vector<WeightInput> weight_inputs;  // inputs[3...]
  for (size_t d = 0; d < weights.size(); ++d) {
    const functional::CudnnLstmSlots& slots = layout.directions[d];
    const std::pair<const Variable*, int64_t> placed[] = {{&weights[d].weight_ih, slots.weight_ih},
                                                          {&weights[d].weight_hh, slots.weight_hh},
                                                          {&weights[d].bias_ih, slots.bias_ih},
                                                          {&weights[d].bias_hh, slots.bias_hh}};
    for (const auto& [w, slot] : placed) {
      if (!w->defined()) continue;
      const Tensor& t = w->data();
      inputs.push_back(*w);
      weight_inputs.push_back({slot, t.shape()});
      if (t.storage() == block.storage() && t.offset() == block.offset() + slot && t.is_contiguous()) continue;
      if (space.storage() == block.storage()) space = clone(block);
      copy_(space.narrow(0, slot, t.numel()).view(t.shape()), t);
    }
  }
  const Tensor input = contiguous(x.data()), h_start = contiguous(h0.data()), c_start = contiguous(c0.data());
  const functional::CudnnLstmForward forward = functional::cudnn_lstm_forward(
      shape, input, h_start, c_start, space, std::vector<int32_t>(lengths.begin(), lengths.end()),
      autograd::any_requires_grad(inputs));
  std::vector<Variable> outs =
      autograd::record("lstm", inputs, {forward.output, forward.h, forward.c}, [=](const autograd::GradContext& ctx) {
        bool weight_gradient = false;
        for (size_t k = 0; k < weight_inputs.size(); ++k) weight_gradient = weight_gradient || ctx.needs(3 + k);
        const auto grad = [&](size_t k) { return ctx.grad(k).defined() ? contiguous(ctx.grad(k)) : Tensor(); };
        const functional::CudnnLstmGradients g = functional::cudnn_lstm_backward(
            shape, input, h_start, c_start, space, forward, grad(0), grad(1), grad(2), weight_gradient);
        std::vector<Tensor> grads = {g.x, g.h0, g.c0};
        for (const WeightInput& w : weight_inputs) {
          grads.push_back(weight_gradient ? g.weight_space.narrow(0, w.slot, shape_numel(w.shape)).view(w.shape)
                                          : Tensor());
        }
        return grads;
      });
  return {outs[0], outs[1], outs[2]};
}

LstmOutput LSTM::forward(const Variable& x, const LstmState& initial, const Tensor& lengths) {
  TS_CHECK(x.defined() && is_floating(x.dtype()) && x.dim() == 3 && x.size(2) == input_size_,
           "LSTM(input_size=", input_size_, "): input must be floating-point ",
           options_.batch_first ? "[B, T, " : "[T, B, ", input_size_, "], got ",
           x.defined() ? x.data().describe() : "undefined");
  const Variable sequence = options_.batch_first ? autograd::transpose(x, 0, 1) : x;  // [T, B, input]
  const int64_t steps = sequence.size(0), batch = sequence.size(1), hidden = hidden_size_;
  const int64_t states = options_.num_layers * directions();
  const Shape state_shape = {states, batch, hidden};
  LstmState start = initial;
  if (!start.h.defined()) {
    const TensorOptions like{x.dtype(), x.device()};
    start = {Variable(zeros(state_shape, like)), Variable(zeros(state_shape, like))};
  }
  TS_CHECK(start.h.defined() && start.c.defined() && start.h.shape() == state_shape && start.c.shape() == state_shape &&
               start.h.dtype() == x.dtype() && start.c.dtype() == x.dtype() && start.h.device() == x.device() &&
               start.c.device() == x.device(),
           "LSTM: the initial state must be h and c of ", dtype_name(x.dtype()), "[", states, ", ", batch, ", ", hidden,
           "] on ", x.device().to_string(), ", got h ", start.h.defined() ? start.h.data().describe() : "undefined",
           " and c ", start.c.defined() ? start.c.data().describe() : "undefined");
  // The kernels (oneDNN's above all) read the weights as the input's type on
  // its device: a module left in another dtype or on another device would
  // be misread, not converted.
  for (const auto& named : named_parameters()) {
    const Variable& p = named.second;
    TS_CHECK(p.dtype() == x.dtype() && p.device() == x.device(), "LSTM: parameter ", named.first, " is ",
             p.data().describe(), " and the input ", x.data().describe(),
             "; cast or move the module or the input so that they match");
  }
  const std::vector<int64_t> length_of =
      lengths.defined() ? checked_lengths(lengths, steps, batch) : std::vector<int64_t>();
  const bool on_cudnn = runs_on_cudnn(x);
  const Tensor mask = lengths.defined() && !on_cudnn ? length_mask(length_of, steps, x.data()) : Tensor();

  std::vector<Variable> final_h, final_c;  // per layer, [D, B, H]
  Variable layer_input = sequence;
  for (int64_t layer = 0; layer < options_.num_layers; ++layer) {
    const Variable h0 = autograd::narrow(start.h, 0, layer * directions(), directions());
    const Variable c0 = autograd::narrow(start.c, 0, layer * directions(), directions());
    std::vector<DirectionWeights> weights;
    for (int64_t d = 0; d < directions(); ++d) weights.push_back(direction_weights(layer, d == 1));
    if (on_cudnn) {
      const LayerOutput run = cudnn_layer(layer, layer_input, h0, c0, weights, length_of);
      layer_input = run.output;
      final_h.push_back(run.h);
      final_c.push_back(run.c);
    } else {
      std::vector<Variable> outputs, h, c;
      for (int64_t d = 0; d < directions(); ++d) {
        const DirectionWeights& w = weights[d];
        const Direction run = lstm_direction(layer_input, autograd::select(h0, 0, d), autograd::select(c0, 0, d),
                                             w.weight_ih, w.weight_hh, w.bias_ih, w.bias_hh, mask, d == 1);
        outputs.push_back(run.output);
        h.push_back(run.h);
        c.push_back(run.c);
      }
      layer_input = directions() == 2 ? autograd::cat(outputs, 2) : outputs[0];
      final_h.push_back(autograd::stack(h, 0));
      final_c.push_back(autograd::stack(c, 0));
    }
    if (is_training() && options_.dropout > 0 && layer + 1 < options_.num_layers) {
      layer_input = dropout(layer_input, options_.dropout);
    }
  }
  const Variable output = options_.batch_first ? autograd::transpose(layer_input, 0, 1) : layer_input;
  return {output, {autograd::cat(final_h, 0), autograd::cat(final_c, 0)}};
}

}  // namespace ts::nn
