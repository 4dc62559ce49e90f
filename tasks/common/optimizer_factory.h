// The optimizer a task config chooses (its `optimizer` oneof: SGD or
// Adam/AdamW; ASGD next), over a model's named parameters.
#pragma once

#include <memory>

#include "nn/module.h"
#include "optim/optimizer.h"
#include "tasks/common/config.pb.h"

namespace ts::tasks {

// SGD with its defaults when the config chooses none. The lr it starts with
// is the per-worker one; the trainer sets each epoch's lr. Throws an Error
// for settings the optimizer rejects.
std::unique_ptr<optim::Optimizer> make_optimizer(const TaskConfig& config, const nn::Module& model);

}  // namespace ts::tasks
