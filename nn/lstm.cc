#include "nn/lstm.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "nn/dropout.h"
#include "tensor/ops.h"

namespace ts::nn {
namespace {

// mask[t][b][0] = 1 while t < lengths[b], else 0: [T, B, 1] in x's dtype and
// on its device. Checks the lengths first.
Tensor length_mask(const Tensor& lengths, int64_t steps, int64_t batch, const Tensor& like) {
  TS_CHECK(
      lengths.dtype() == DType::kI64 && lengths.dim() == 1 && lengths.size(0) == batch && lengths.device().is_cpu(),
      "LSTM: lengths must be i64[", batch, "] on the CPU, got ", lengths.describe());
  const std::vector<int64_t> len = to_vector<int64_t>(lengths);
  std::vector<double> mask(steps * batch);
  for (int64_t b = 0; b < batch; ++b) {
    TS_CHECK(len[b] >= 1 && len[b] <= steps, "LSTM: length ", len[b], " of sequence ", b, " is not in [1, ", steps,
             "]");
    for (int64_t t = 0; t < len[b]; ++t) mask[t * batch + b] = 1;
  }
  return to(from_vector<double>(mask, {steps, batch, 1}, like.device()), like.dtype());
}

// `kept` where the mask is 1, `old` where it is 0, exactly (one of the two
// products is 0).
Variable masked_update(const Variable& kept, const Variable& old, const Variable& mask) {
  return kept * mask + old * (1.0 - mask);
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

LstmOutput LSTM::forward(const Variable& x, const LstmState& initial, const Tensor& lengths) {
  TS_CHECK(x.defined() && is_floating(x.dtype()) && x.dim() == 3 && x.size(2) == input_size_,
           "LSTM(input_size=", input_size_, "): input must be floating-point ",
           options_.batch_first ? "[B, T, " : "[T, B, ", input_size_, "], got ",
           x.defined() ? x.data().describe() : "undefined");
  const Variable sequence = options_.batch_first ? autograd::transpose(x, 0, 1) : x;  // [T, B, input]
  const int64_t steps = sequence.size(0), batch = sequence.size(1), hidden = hidden_size_;
  const int64_t directions = options_.bidirectional ? 2 : 1, states = options_.num_layers * directions;
  const Shape state_shape = {states, batch, hidden};
  LstmState start = initial;
  if (!start.h.defined()) {
    const TensorOptions like{x.dtype(), x.device()};
    start = {Variable(zeros(state_shape, like)), Variable(zeros(state_shape, like))};
  }
  TS_CHECK(start.h.defined() && start.c.defined() && start.h.shape() == state_shape && start.c.shape() == state_shape &&
               start.h.dtype() == x.dtype() && start.c.dtype() == x.dtype(),
           "LSTM: the initial state must be h and c of ", dtype_name(x.dtype()), "[", states, ", ", batch, ", ", hidden,
           "], got h ", start.h.defined() ? start.h.data().describe() : "undefined", " and c ",
           start.c.defined() ? start.c.data().describe() : "undefined");
  const Variable mask = lengths.defined() ? Variable(length_mask(lengths, steps, batch, x.data())) : Variable();

  std::vector<Variable> final_h, final_c;
  Variable layer_input = sequence;
  for (int64_t layer = 0; layer < options_.num_layers; ++layer) {
    std::vector<Variable> direction_outputs;
    for (int64_t d = 0; d < directions; ++d) {
      const bool reverse = d == 1;
      Variable w_hh = param(param_name("weight_hh", layer, reverse));
      if (is_training() && options_.weight_drop > 0) w_hh = dropout(w_hh, options_.weight_drop);
      const Variable w_hh_t = autograd::transpose(w_hh, 0, 1);
      // The input projection of every step in one GEMM: [T, B, 4 * hidden].
      Variable projected =
          autograd::matmul(layer_input, autograd::transpose(param(param_name("weight_ih", layer, reverse)), 0, 1));
      if (options_.bias) {
        projected =
            projected + (param(param_name("bias_ih", layer, reverse)) + param(param_name("bias_hh", layer, reverse)));
      }
      Variable h = autograd::select(start.h, 0, layer * directions + d);
      Variable c = autograd::select(start.c, 0, layer * directions + d);
      std::vector<Variable> outputs(steps);
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t t = reverse ? steps - 1 - s : s;
        const Variable gates = autograd::select(projected, 0, t) + autograd::matmul(h, w_hh_t);  // [B, 4 * hidden]
        const Variable i = autograd::sigmoid(autograd::narrow(gates, 1, 0, hidden));
        const Variable f = autograd::sigmoid(autograd::narrow(gates, 1, hidden, hidden));
        const Variable g = autograd::tanh(autograd::narrow(gates, 1, 2 * hidden, hidden));
        const Variable o = autograd::sigmoid(autograd::narrow(gates, 1, 3 * hidden, hidden));
        const Variable c_next = f * c + i * g;
        const Variable h_next = o * autograd::tanh(c_next);
        if (mask.defined()) {
          const Variable m = autograd::select(mask, 0, t);  // [B, 1]
          c = masked_update(c_next, c, m);
          h = masked_update(h_next, h, m);
          outputs[t] = h_next * m;
        } else {
          c = c_next;
          h = h_next;
          outputs[t] = h_next;
        }
      }
      final_h.push_back(h);
      final_c.push_back(c);
      direction_outputs.push_back(autograd::stack(outputs, 0));
    }
    layer_input = directions == 2 ? autograd::cat(direction_outputs, 2) : direction_outputs[0];
    if (is_training() && options_.dropout > 0 && layer + 1 < options_.num_layers) {
      layer_input = dropout(layer_input, options_.dropout);
    }
  }
  const Variable output = options_.batch_first ? autograd::transpose(layer_input, 0, 1) : layer_input;
  return {output, {autograd::stack(final_h, 0), autograd::stack(final_c, 0)}};
}

}  // namespace ts::nn
