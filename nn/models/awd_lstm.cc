#include "nn/models/awd_lstm.h"

#include <string>
#include <utility>

#include "autograd/ops.h"
#include "base/error.h"
#include "tensor/ops.h"

namespace ts::nn::models {
namespace {

// The reference's ModuleList of LSTMs, so that their parameters are named
// rnns.<l>.weight_ih_l0, ... as there.
class LstmList final : public Module {
 public:
  explicit LstmList(std::vector<std::shared_ptr<LSTM>> lstms) : Module("ModuleList") {
    for (size_t l = 0; l < lstms.size(); ++l) register_module(std::to_string(l), std::move(lstms[l]));
  }
};

}  // namespace

AwdLstm::AwdLstm(int64_t vocabulary, AwdLstmOptions options)
    : Module("AwdLstm"), vocabulary_(vocabulary), options_(options) {
  TS_CHECK(vocabulary > 0 && options.embedding_size > 0 && options.hidden_size > 0 && options.num_layers > 0,
           "AwdLstm(vocabulary=", vocabulary, ", embedding_size=", options.embedding_size,
           ", hidden_size=", options.hidden_size, ", num_layers=", options.num_layers, "): sizes must be positive");
  encoder_ =
      register_module("encoder", std::make_shared<Embedding>(vocabulary, options.embedding_size,
                                                             EmbeddingOptions{.word_dropout = options.dropout_e}));
  const int64_t last_size = options.tie_weights ? options.embedding_size : options.hidden_size;
  std::vector<std::shared_ptr<LSTM>> lstms;
  for (int64_t l = 0; l < options.num_layers; ++l) {
    const int64_t in = l == 0 ? options.embedding_size : options.hidden_size;
    const int64_t out = l + 1 == options.num_layers ? last_size : options.hidden_size;
    lstms.push_back(std::make_shared<LSTM>(in, out, LstmOptions{.weight_drop = options.weight_drop}));
    rnns_.emplace_back(lstms.back());
  }
  register_module("rnns", std::make_shared<LstmList>(std::move(lstms)));
  drop_i_ = register_module("lockdrop_i", std::make_shared<LockedDropout>(options.dropout_i));
  drop_h_ = register_module("lockdrop_h", std::make_shared<LockedDropout>(options.dropout_h));
  drop_ = register_module("lockdrop", std::make_shared<LockedDropout>(options.dropout));
  // The reference's init_weights: the embedding (and so the tied decoder)
  // uniform in +-0.1, the decoder's bias 0.
  const Tensor& embedding = encoder_->weight().data();
  copy_(embedding, uniform(embedding.shape(), -0.1, 0.1));
  if (!options.tie_weights) register_parameter("decoder_weight", uniform({vocabulary, last_size}, -0.1, 0.1));
  register_parameter("decoder_bias", zeros({vocabulary}));
}

AwdLstmOutput AwdLstm::forward(const Tensor& ids, const std::vector<LstmState>& state) {
  TS_CHECK(ids.dim() == 2, "AwdLstm: ids must be [T, B], got ", ids.describe());
  TS_CHECK(state.empty() || static_cast<int64_t>(state.size()) == options_.num_layers, "AwdLstm: ", state.size(),
           " states for ", options_.num_layers, " layers");
  AwdLstmOutput out;
  Variable x = drop_i_(encoder_(ids));
  for (int64_t l = 0; l < options_.num_layers; ++l) {
    LstmOutput layer = rnns_[l](x, state.empty() ? LstmState{} : state[l]);
    out.state.push_back(layer.state);
    out.raw_outputs.push_back(layer.output);
    x = l + 1 < options_.num_layers ? drop_h_(layer.output) : layer.output;
  }
  out.dropped_output = drop_(x);
  const Variable& decoder_weight = options_.tie_weights ? encoder_->weight() : param("decoder_weight");
  const Variable flat = autograd::reshape(out.dropped_output, {-1, out.dropped_output.size(2)});
  out.logits = autograd::matmul(flat, autograd::transpose(decoder_weight, 0, 1)) + param("decoder_bias");
  return out;
}

}  // namespace ts::nn::models
