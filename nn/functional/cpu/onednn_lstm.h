// One LSTM layer in one direction on the CPU through oneDNN's LSTM
// primitives (f32; forward in training mode, which keeps a workspace, and
// backward), built once per shape and cached. Tensors are ours, contiguous
// and f32: x [T, B, in], h0 and c0 [B, H], weight_ih [4H, in] and weight_hh
// [4H, H] (PyTorch's layout, which is oneDNN's ldgoi; the gate order i, f,
// g, o is the same), bias [4H] (bias_ih + bias_hh). A oneDNN failure throws
// ts::Error naming the op and the shapes.
#pragma once

#include "tensor/tensor.h"

namespace ts::nn::functional {

struct OnednnLstmForward {
  Tensor output;     // [T, B, H]
  Tensor h, c;       // [B, H], after the last step
  Tensor workspace;  // u8: what the backward reads
};
OnednnLstmForward onednn_lstm_forward(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& weight_ih,
                                      const Tensor& weight_hh, const Tensor& bias, bool reverse);

struct OnednnLstmGradients {
  Tensor x, h0, c0, weight_ih, weight_hh, bias;
};
// From the gradients of the output [T, B, H] and the final h and c [B, H].
OnednnLstmGradients onednn_lstm_backward(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& weight_ih,
                                         const Tensor& weight_hh, const Tensor& bias, bool reverse,
                                         const OnednnLstmForward& forward, const Tensor& grad_output,
                                         const Tensor& grad_h, const Tensor& grad_c);

}  // namespace ts::nn::functional
