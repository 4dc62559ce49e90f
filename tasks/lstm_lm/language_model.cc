#include "tasks/lstm_lm/language_model.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "nn/losses.h"
#include "tensor/ops.h"

namespace ts::tasks {
namespace {

// The batch's fields: input and target [T, B], the window's start column.
void check_batch(absl::Span<const Tensor> batch) {
  TS_CHECK(batch.size() == 3 && batch[0].dim() == 2 && batch[0].shape() == batch[1].shape(),
           "language model: expected a BPTT batch {input [T, B], target [T, B], start}, got ", batch.size(), " fields");
}

// The carried states for this batch: zeros where its window starts an
// epoch (column 0), since each epoch starts over. Masked where the states
// are, not tested on the host: on a GPU that read would wait for the
// previous step every step. Zero states give the LSTM the same values as
// none.
std::vector<nn::LstmState> carried_into(const std::vector<nn::LstmState>& states, absl::Span<const Tensor> batch) {
  if (states.empty()) return states;
  const Tensor starts_epoch = eq(batch[2], 0);
  std::vector<nn::LstmState> out;
  out.reserve(states.size());
  for (const nn::LstmState& s : states) {
    out.push_back({autograd::Variable(where(starts_epoch, 0.0, s.h.data())),
                   autograd::Variable(where(starts_epoch, 0.0, s.c.data()))});
  }
  return out;
}

// The states without their graph: the next window backpropagates into its
// own steps only (truncated BPTT).
std::vector<nn::LstmState> detached(const std::vector<nn::LstmState>& states) {
  std::vector<nn::LstmState> out;
  out.reserve(states.size());
  for (const nn::LstmState& s : states) out.push_back({autograd::Variable(s.h.data()), autograd::Variable(s.c.data())});
  return out;
}

}  // namespace

LanguageModelRecipe::LanguageModelRecipe(TrainingData data, std::shared_ptr<nn::models::AwdLstm> model,
                                         LanguageModelOptions options)
    : data_(std::move(data)), model_(std::move(model)), options_(options) {
  TS_CHECK(options_.bptt >= 1, "language model: bptt ", options_.bptt, " must be >= 1");
}

autograd::Variable LanguageModelRecipe::loss(absl::Span<const Tensor> batch) {
  check_batch(batch);
  const nn::models::AwdLstmOutput out = model_->forward(batch[0], carried_into(train_state_, batch));
  train_state_ = detached(out.state);
  return nn::cross_entropy(out.logits, reshape(batch[1], {-1})) +
         nn::activation_regularization(out.dropped_output, options_.ar_alpha) +
         nn::temporal_activation_regularization(out.raw_outputs.back(), options_.tar_beta);
}

EvalSums LanguageModelRecipe::evaluate(absl::Span<const Tensor> batch) {
  check_batch(batch);
  const nn::models::AwdLstmOutput out = model_->forward(batch[0], carried_into(eval_state_, batch));
  eval_state_ = detached(out.state);
  const Tensor nll = nn::cross_entropy(out.logits, reshape(batch[1], {-1}), {.reduction = nn::Reduction::kSum}).data();
  const Tensor tokens = scalar_tensor(batch[1].numel(), {DType::kF64, nll.device()});
  if (options_.eval_weight == 1) return {{"nll", nll}, {"tokens", tokens}};
  return {{"nll", to(nll, DType::kF64) * options_.eval_weight}, {"tokens", tokens * options_.eval_weight}};
}

Metrics LanguageModelRecipe::metrics(const std::map<std::string, double>& sums) const {
  const double loss = sums.at("nll") / sums.at("tokens");
  return {{"loss", loss}, {"perplexity", std::exp(loss)}};
}

int64_t LanguageModelRecipe::samples_in(absl::Span<const Tensor> batch) const {
  check_batch(batch);
  return batch[0].numel();
}

double LanguageModelRecipe::lr_factor(absl::Span<const Tensor> batch) const {
  check_batch(batch);
  return static_cast<double>(batch[0].size(0)) / static_cast<double>(options_.bptt);
}

nn::NamedTensors LanguageModelRecipe::state() const {
  nn::NamedTensors state;
  for (size_t l = 0; l < train_state_.size(); ++l) {
    state.emplace_back(absl::StrCat("h.", l), train_state_[l].h.data());
    state.emplace_back(absl::StrCat("c.", l), train_state_[l].c.data());
  }
  return state;
}

absl::Status LanguageModelRecipe::load_state(const nn::NamedTensors& state) {
  if (state.size() % 2 != 0) {
    return absl::DataLossError(absl::StrCat("language model state: ", state.size(), " tensors, not (h, c) pairs"));
  }
  std::vector<nn::LstmState> loaded;
  for (size_t i = 0; i < state.size(); i += 2) {
    const size_t l = i / 2;
    if (state[i].first != absl::StrCat("h.", l) || state[i + 1].first != absl::StrCat("c.", l)) {
      return absl::DataLossError(absl::StrCat("language model state: expected h.", l, " and c.", l, ", got ",
                                              state[i].first, " and ", state[i + 1].first));
    }
    loaded.push_back({autograd::Variable(state[i].second), autograd::Variable(state[i + 1].second)});
  }
  train_state_ = std::move(loaded);
  return absl::OkStatus();
}

}  // namespace ts::tasks
