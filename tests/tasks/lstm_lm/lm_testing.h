// What the language-model task's tests share: a tiny AWD-LSTM task over a
// synthetic token stream, built and run as run_task does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "nn/module.h"
#include "tasks/common/trainer.h"
#include "tasks/lstm_lm/language_model.h"

namespace ts::tasks::lm_testing {

inline constexpr int64_t kVocabulary = 40;

// 2 epochs of batch 4 over 1200 synthetic tokens (bptt 12) on the CPU,
// output and checkpoints under the test's temporary directory/<name>.
TaskConfig config(const std::string& name);

// The recipe of rank `rank` of `world_size`: a 2-layer AWD-LSTM of 6 and 10
// units, with AWD-LSTM's dropouts or none.
std::unique_ptr<LanguageModelRecipe> recipe(const TaskConfig& c, int rank = 0, int world_size = 1,
                                            bool dropouts = true);

// Every value of every parameter, in f64, tensor by tensor.
std::vector<std::vector<double>> parameters(const nn::Module& model);

// Trains as run_task does, on `comm`'s ranks when given.
absl::StatusOr<RunSummary> run(const TaskConfig& c, Recipe& r, Device device = Device::cpu(),
                               collectives::Communicator* comm = nullptr);

}  // namespace ts::tasks::lm_testing
