// AWD-LSTM against the reference model in PyTorch from the same weights (the
// fixture written by tools/golden/awd_lstm_torch.py): in eval mode, where
// the dropouts are the identity, the logits, each layer's final state, the
// next-token cross-entropy and every parameter's gradient (the tied
// embedding's gathering the decoder's and the lookup's) match in f64 within
// 1e-10. In training, the pieces AR and TAR read come out with their shapes.
#include "nn/models/awd_lstm.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/checkpoint.h"
#include "nn/losses.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn::models {
namespace {

using ::ts::testing::expect_close;
using ::ts::testing::ref_of;
using ::ts::testing::value_or_die;

constexpr char kFixture[] = "tests/nn/models/testdata/awd_lstm_golden.tsckpt";
constexpr AwdLstmOptions kSmall{.embedding_size = 6, .hidden_size = 8, .num_layers = 3};
constexpr int64_t kVocabulary = 23;

class AwdLstmGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& [name, t] : value_or_die(load_tensors(kFixture))) fixture_[name] = t;
    model_ = std::make_shared<AwdLstm>(kVocabulary, kSmall);
    model_->to(DType::kF64);
    NamedTensors init;
    for (const auto& [name, t] : model_->state_dict()) init.emplace_back(name, fixture_.at("init." + name));
    ASSERT_OK(model_->load_state_dict(init));
  }

  std::map<std::string, Tensor> fixture_;
  std::shared_ptr<AwdLstm> model_;
};

TEST_F(AwdLstmGoldenTest, EvalMatchesTorchFromTheSameWeights) {
  model_->eval();
  const Tensor& ids = fixture_.at("ids");  // [T + 1, B]: inputs and next tokens
  const int64_t steps = ids.size(0) - 1;
  std::vector<LstmState> state;
  for (int64_t l = 0; l < kSmall.num_layers; ++l) {
    state.push_back({Variable(fixture_.at(absl::StrCat("h0.", l))), Variable(fixture_.at(absl::StrCat("c0.", l)))});
  }
  const AwdLstmOutput out = model_->forward(ids.narrow(0, 0, steps), state);
  expect_close(out.logits.data(), ref_of(fixture_.at("logits")), 1e-10, 1.0, "logits");
  for (int64_t l = 0; l < kSmall.num_layers; ++l) {
    expect_close(out.state[l].h.data(), ref_of(fixture_.at(absl::StrCat("h.", l))), 1e-10, 1.0, "h");
    expect_close(out.state[l].c.data(), ref_of(fixture_.at(absl::StrCat("c.", l))), 1e-10, 1.0, "c");
  }
  const Variable loss = cross_entropy(out.logits, reshape(ids.narrow(0, 1, steps), {-1}));
  expect_close(loss.data(), ref_of(reshape(fixture_.at("loss"), {})), 1e-12, 1.0, "loss");
  loss.backward();
  for (const auto& [name, param] : model_->named_parameters()) {
    expect_close(param.grad(), ref_of(fixture_.at("grad." + name)), 1e-10, 1.0, "grad." + name);
  }
}

TEST_F(AwdLstmGoldenTest, TrainingGivesWhatTheRegularizersRead) {
  manual_seed(1);
  const Tensor ids = fixture_.at("ids").narrow(0, 0, 5);
  const AwdLstmOutput out = model_->forward(ids);
  ASSERT_EQ(out.raw_outputs.size(), 3u);
  EXPECT_EQ(out.raw_outputs[0].shape(), (Shape{5, 4, 8}));
  EXPECT_EQ(out.raw_outputs[2].shape(), (Shape{5, 4, 6}));  // the tied last layer
  EXPECT_EQ(out.dropped_output.shape(), (Shape{5, 4, 6}));
  EXPECT_EQ(out.logits.shape(), (Shape{20, kVocabulary}));
  const Variable loss = cross_entropy(out.logits, reshape(fixture_.at("ids").narrow(0, 1, 5), {-1})) +
                        activation_regularization(out.dropped_output, 2) +
                        temporal_activation_regularization(out.raw_outputs.back(), 1);
  loss.backward();
  for (const auto& [name, param] : model_->named_parameters()) EXPECT_TRUE(param.grad().defined()) << name;
}

}  // namespace
}  // namespace ts::nn::models
