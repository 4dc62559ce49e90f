// LSTM as torch.nn.LSTM: layers, batch-first or time-major, dropout between
// layers, bidirectional, an initial and final (h, c) state (so that truncated
// BPTT carries state across windows, detached by the caller), and padded
// variable-length batches. Parameter names, shapes, gate order (i, f, g, o)
// and initialization (uniform in +-1/sqrt(hidden)) are PyTorch's, so a
// state dict maps one-to-one.
//
// Each layer and direction is one recorded op: the forward projects the
// inputs of all time steps with one GEMM, then takes one recurrent GEMM per
// step; the backward runs the steps in reverse for the gate gradients and
// forms the input and weight gradients of all steps with one GEMM each. Its
// arithmetic is tensor ops, so the layer runs on either device.
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"

namespace ts::nn {

struct LstmOptions {
  int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;  // x [B, T, input] instead of [T, B, input]
  double dropout = 0;        // on each layer's output but the last, in training
  bool bidirectional = false;
  // AWD-LSTM's weight drop (DropConnect): in training, each forward drops
  // elements of every weight_hh with this probability (a new mask per
  // forward, shared by all its time steps), scaling the rest by 1/(1-p).
  double weight_drop = 0;
};

// h and c [num_layers * directions, B, hidden], layer-major as PyTorch's
// (layer 0 forward, layer 0 reverse, layer 1 forward, ...).
struct LstmState {
  Variable h, c;
};

struct LstmOutput {
  Variable output;  // [T, B, directions * hidden] (batch-first: [B, T, ...])
  LstmState state;  // after each sequence's last valid step
};

class LSTM final : public Module {
 public:
  // Sizes positive, dropout in [0, 1].
  LSTM(int64_t input_size, int64_t hidden_size, LstmOptions options = {});

  // `initial` undefined: zeros. `lengths` (i64 [B] on the CPU, each in
  // [1, T]) marks padded sequences, as a packed sequence does: past its
  // length a sequence's output is 0 and its state is left as it was, and the
  // reverse direction starts at its last valid step.
  LstmOutput forward(const Variable& x, const LstmState& initial = {}, const Tensor& lengths = {});

  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  const LstmOptions& options() const { return options_; }

 private:
  // "weight_ih_l0", "bias_hh_l1_reverse", ...
  static std::string param_name(const char* kind, int64_t layer, bool reverse);

  int64_t input_size_, hidden_size_;
  LstmOptions options_;
};

}  // namespace ts::nn
