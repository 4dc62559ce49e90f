#include "tests/tasks/lstm_lm/lm_testing.h"

#include "base/files.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "tasks/lstm_lm/lm_data.h"
#include "tasks/lstm_lm/lstm_lm.pb.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/tensor/testing.h"

namespace ts::tasks::lm_testing {

TaskConfig config(const std::string& name) {
  TaskConfig c;
  c.set_name(name);
  c.set_seed(5);
  c.set_epochs(2);
  c.set_batch_size(4);
  c.set_synthetic(true);
  c.set_grad_clip_norm(0.25);
  c.mutable_sgd()->set_lr(5);
  c.set_target_metric("perplexity");
  c.set_target_value(30);
  c.set_target_minimize(true);
  c.set_device("cpu");
  c.set_warmup_steps(1);
  const std::string root = join_path(::testing::TempDir(), name);
  c.set_output_dir(join_path(root, "out"));
  c.set_checkpoint_dir(join_path(root, "ckpt"));
  LstmLmConfig& lm = *c.MutableExtension(lstm_lm);
  lm.set_synthetic_vocabulary(kVocabulary);
  lm.set_synthetic_train_tokens(1200);
  lm.set_synthetic_valid_tokens(300);
  lm.set_bptt(12);
  lm.set_eval_batch_size(3);
  lm.set_eval_bptt(7);
  return c;
}

std::unique_ptr<LanguageModelRecipe> recipe(const TaskConfig& c, int rank, int world_size, bool dropouts) {
  absl::StatusOr<LmData> data = open_lm_data(c, rank, world_size);
  EXPECT_OK(data.status());
  manual_seed(c.seed());  // as run_task seeds before the model is built
  nn::models::AwdLstmOptions model;
  model.embedding_size = 6;
  model.hidden_size = 10;
  model.num_layers = 2;
  if (!dropouts) model.dropout = model.dropout_h = model.dropout_i = model.dropout_e = model.weight_drop = 0;
  const LstmLmConfig& lm = c.GetExtension(lstm_lm);
  return std::make_unique<LanguageModelRecipe>(
      std::move(data->data), std::make_shared<nn::models::AwdLstm>(data->vocabulary, model),
      LanguageModelOptions{lm.bptt(), lm.ar_alpha(), lm.tar_beta(), data->eval_weight});
}

std::vector<std::vector<double>> parameters(const nn::Module& model) {
  std::vector<std::vector<double>> out;
  for (const auto& [name, p] : model.named_parameters()) out.push_back(to_vector<double>(to(p.data(), DType::kF64)));
  return out;
}

absl::StatusOr<RunSummary> run(const TaskConfig& c, Recipe& r, Device device, collectives::Communicator* comm) {
  TrainerOptions options;
  options.progress_out = nullptr;
  if (comm != nullptr) {
    options.comm = comm;
    options.rank = comm->rank();
    options.world_size = comm->world_size();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::create(c, device, r, options));
  return trainer->run();
}

}  // namespace ts::tasks::lm_testing
