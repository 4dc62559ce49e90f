// Ten training steps of the language-model recipe against awd-lstm-lm's
// main.py train() rebuilt in PyTorch, from the same weights, in f64: an
// AWD-LSTM (3 layers, tied, every dropout 0 so that both sides compute the
// same function) reads windows of lengths 2 to 8 over a token stream,
// carrying its detached states from window to window and starting from
// zeros where a window starts the stream again (the sixth); each step's loss
// (cross-entropy + AR + TAR), gradient norm before clipping, and the
// parameters after the tenth step (gradients clipped to total 2-norm 0.25,
// SGD with weight decay at lr * length / bptt) match PyTorch within 1e-9.
// The steps are driven as tasks/common/trainer.cc's train_step drives them.
//
// The fixture (about 15 KB) is written by
//   python3 tools/golden/awd_lstm_torch.py training-fixture
//   tests/tasks/lstm_lm/testdata/awd_lstm_training_golden.tsckpt
// whose constants (sizes, windows, hyperparameters) this file repeats.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "nn/checkpoint.h"
#include "nn/models/awd_lstm.h"
#include "optim/clip.h"
#include "optim/sgd.h"
#include "tasks/common/recipe.h"
#include "tasks/lstm_lm/language_model.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::autograd::Variable;
using ::ts::testing::expect_close;
using ::ts::testing::ref_of;
using ::ts::testing::value_or_die;

constexpr char kFixture[] = "tests/tasks/lstm_lm/testdata/awd_lstm_training_golden.tsckpt";
constexpr int64_t kVocabulary = 23;
constexpr nn::models::AwdLstmOptions kModel{.embedding_size = 4,
                                            .hidden_size = 5,
                                            .num_layers = 3,
                                            .dropout = 0,
                                            .dropout_h = 0,
                                            .dropout_i = 0,
                                            .dropout_e = 0,
                                            .weight_drop = 0,
                                            .tie_weights = true};
constexpr LanguageModelOptions kRecipe{.bptt = 6, .ar_alpha = 2, .tar_beta = 1};
constexpr double kLr = 2, kWeightDecay = 1.2e-6, kClip = 0.25;
// Relative to the larger of the value and this floor: the parameters are
// around 0.1, and an element that crosses zero must not demand more than
// f64 gives.
constexpr double kTolerance = 1e-9, kParameterFloor = 1e-2;

TEST(AwdLstmTrainingGoldenTest, TenStepsMatchPyTorchFromTheSameWeights) {
  std::map<std::string, Tensor> fixture;
  for (auto& [name, t] : value_or_die(nn::load_tensors(kFixture))) fixture[name] = t;
  auto model = std::make_shared<nn::models::AwdLstm>(kVocabulary, kModel);
  model->to(DType::kF64);
  nn::NamedTensors init;
  for (const auto& [name, t] : model->state_dict()) init.emplace_back(name, fixture.at("init." + name));
  ASSERT_OK(model->load_state_dict(init));
  model->train();

  LanguageModelRecipe recipe(TrainingData{}, model, kRecipe);
  const std::vector<Variable> params = model->parameters();
  optim::Sgd sgd(model->named_parameters(), {.lr = kLr, .weight_decay = kWeightDecay});

  const Tensor& tokens = fixture.at("tokens");    // [rows, batch]
  const Tensor& windows = fixture.at("windows");  // [steps, 2]: start row, length
  const std::vector<int64_t> starts = to_vector<int64_t>(windows.select(1, 0));
  const std::vector<int64_t> lengths = to_vector<int64_t>(windows.select(1, 1));
  const std::vector<double> losses = to_vector<double>(fixture.at("loss"));
  const std::vector<double> norms = to_vector<double>(fixture.at("grad_norm"));
  ASSERT_EQ(starts.size(), 10u);
  ASSERT_EQ(losses.size(), starts.size());
  ASSERT_EQ(norms.size(), starts.size());

  for (size_t step = 0; step < starts.size(); ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step << " (window at row " << starts[step] << ", length "
                                      << lengths[step] << ")");
    const std::vector<Tensor> batch = {tokens.narrow(0, starts[step], lengths[step]),
                                       tokens.narrow(0, starts[step] + 1, lengths[step]),
                                       scalar_tensor(starts[step], {DType::kI64})};
    const Variable loss = recipe.loss(batch);
    EXPECT_NEAR(item<double>(loss.data()), losses[step], kTolerance * losses[step]) << "loss";
    loss.backward();
    const double norm = item<double>(optim::clip_grad_norm_(params, kClip));
    EXPECT_NEAR(norm, norms[step], kTolerance * norms[step]) << "gradient norm before clipping";
    // As the trainer's train_step: the window's lr for this step only.
    sgd.set_lr(kLr * recipe.lr_factor(batch));
    sgd.step();
    sgd.set_lr(kLr);
    sgd.zero_grad();
  }
  for (const auto& [name, param] : model->named_parameters()) {
    expect_close(param.data(), ref_of(fixture.at("final." + name)), kTolerance, kParameterFloor, "final." + name);
  }
}

}  // namespace
}  // namespace ts::tasks
