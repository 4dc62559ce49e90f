// The language-model recipe (MLBench task 3a, AWD-LSTM's training loop): an
// AWD-LSTM reads the token stream window after window, carrying its
// (detached) LSTM states from one window to the next and starting over at
// each epoch's first window; the loss is the cross entropy of the next
// token plus AWD-LSTM's activation regularizers (AR, TAR); each step's lr
// is scaled by its window's length over bptt; evaluation reports the
// validation loss and perplexity (exp of the loss per token). Throughput
// counts tokens; the lr grows with sqrt(world size) (MLBench's rule for 3a).
#pragma once

#include <memory>
#include <vector>

#include "nn/models/awd_lstm.h"
#include "tasks/common/recipe.h"

namespace ts::tasks {

struct LanguageModelOptions {
  int64_t bptt = 70;       // the window length the lr is scaled to
  double ar_alpha = 2;     // activation regularization
  double tar_beta = 1;     // temporal activation regularization
  double eval_weight = 1;  // LmData::eval_weight
};

class LanguageModelRecipe final : public Recipe {
 public:
  // `data` holds BPTT batch sources ({input [T, B], target [T, B], start}).
  LanguageModelRecipe(TrainingData data, std::shared_ptr<nn::models::AwdLstm> model, LanguageModelOptions options);

  const TrainingData& data() const override { return data_; }
  std::shared_ptr<nn::Module> model() const override { return model_; }
  autograd::Variable loss(absl::Span<const Tensor> batch) override;
  EvalSums evaluate(absl::Span<const Tensor> batch) override;
  Metrics metrics(const std::map<std::string, double>& sums) const override;
  optim::LrScaling lr_scaling() const override { return optim::LrScaling::kSqrt; }
  int64_t samples_in(absl::Span<const Tensor> batch) const override;
  std::string sample_unit() const override { return "tokens"; }
  double lr_factor(absl::Span<const Tensor> batch) const override;
  // The training windows' carried states: h.<layer> and c.<layer>.
  nn::NamedTensors state() const override;
  absl::Status load_state(const nn::NamedTensors& state) override;

 private:
  TrainingData data_;
  std::shared_ptr<nn::models::AwdLstm> model_;
  LanguageModelOptions options_;
  // Carried from window to window (empty: zeros), detached.
  std::vector<nn::LstmState> train_state_, eval_state_;
};

}  // namespace ts::tasks
