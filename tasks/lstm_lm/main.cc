// MLBench task 3a: the AWD-LSTM language model. The default trains on
// English prose from Debian's fortunes; WikiText-2 with --dataset=WIKITEXT2
// --data_path=DIR; a synthetic token stream with --synthetic. Under
// tools/launch each rank reads its rows of the stream with DDP, and the lr
// grows with the square root of the world size over a 3-epochs-per-rank
// warm-up (MLBench's rule for 3a).
#include <memory>

#include "base/error.h"
#include "base/status_macros.h"
#include "tasks/common/task_main.h"
#include "tasks/lstm_lm/default_config.h"
#include "tasks/lstm_lm/language_model.h"
#include "tasks/lstm_lm/lm_data.h"
#include "tasks/lstm_lm/lstm_lm.pb.h"

namespace ts::tasks {
namespace {

nn::models::AwdLstmOptions model_options(const LstmLmConfig& lm) {
  nn::models::AwdLstmOptions o;
  o.embedding_size = lm.embedding_size();
  o.hidden_size = lm.hidden_size();
  o.num_layers = lm.num_layers();
  o.dropout = lm.dropout();
  o.dropout_h = lm.dropout_h();
  o.dropout_i = lm.dropout_i();
  o.dropout_e = lm.dropout_e();
  o.weight_drop = lm.weight_drop();
  o.tie_weights = lm.tie_weights();
  return o;
}

absl::StatusOr<std::unique_ptr<Recipe>> make_recipe(const TaskContext& task) {
  const LstmLmConfig& lm = task.config.GetExtension(lstm_lm);
  ASSIGN_OR_RETURN(LmData data, open_lm_data(task.config, task.rank, task.world_size));
  return capture([&]() -> std::unique_ptr<Recipe> {
    auto model = std::make_shared<nn::models::AwdLstm>(data.vocabulary, model_options(lm));
    return std::make_unique<LanguageModelRecipe>(
        std::move(data.data), std::move(model),
        LanguageModelOptions{lm.bptt(), lm.ar_alpha(), lm.tar_beta(), data.eval_weight});
  });
}

}  // namespace
}  // namespace ts::tasks

int main(int argc, char** argv) {
  return ts::tasks::run_task(argc, argv, {"lstm_lm", kLstmLmDefaultConfig}, ts::tasks::make_recipe);
}
