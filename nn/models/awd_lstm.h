// AWD-LSTM (Merity et al., salesforce/awd-lstm-lm's RNNModel with LSTM
// cells), the MLBench task 3a language model: an embedding with word
// dropout, locked dropout on its output, a stack of single-layer LSTMs with
// weight drop on their recurrent weights and locked dropout between them
// (the last one sized back to the embedding when the decoder is tied), and a
// decoder that shares the embedding's weight. Parameter names follow the
// reference's modules where one parameter has one name: encoder.weight,
// rnns.<l>.weight_ih_l0, ... (WeightDrop's weight_hh_l0_raw is our
// weight_hh_l0), decoder_bias, and decoder_weight when untied (tied, the
// reference's decoder.weight is encoder.weight).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/lstm.h"
#include "nn/module.h"

namespace ts::nn::models {

// awd-lstm-lm's defaults (its main.py), which MLBench's task 3a uses.
struct AwdLstmOptions {
  int64_t embedding_size = 400;
  int64_t hidden_size = 1150;
  int64_t num_layers = 3;
  double dropout = 0.4;     // on the last LSTM's output
  double dropout_h = 0.3;   // between LSTMs
  double dropout_i = 0.65;  // on the embedding's output
  double dropout_e = 0.1;   // whole words of the embedding
  double weight_drop = 0.5;
  bool tie_weights = true;
};

struct AwdLstmOutput {
  Variable logits;                    // [T * B, vocabulary]
  std::vector<LstmState> state;       // one per layer, for the next window
  std::vector<Variable> raw_outputs;  // each LSTM's output before dropout (TAR reads the last)
  Variable dropped_output;            // the last LSTM's output after dropout (AR reads it)
};

class AwdLstm final : public Module {
 public:
  AwdLstm(int64_t vocabulary, AwdLstmOptions options = {});
  // ids [T, B] (time-major, i64); `state` empty: zeros.
  AwdLstmOutput forward(const Tensor& ids, const std::vector<LstmState>& state = {});

  const AwdLstmOptions& options() const { return options_; }

 private:
  int64_t vocabulary_;
  AwdLstmOptions options_;
  Handle<Embedding> encoder_;
  std::vector<Handle<LSTM>> rnns_;
  Handle<LockedDropout> drop_i_, drop_h_, drop_;
};

}  // namespace ts::nn::models
