// The optimizer a task config chooses (its `optimizer` oneof: SGD or
// Adam/AdamW; NT-ASGD's switch to ASGD), over named parameters: the model's,
// or under mixed precision their f32 masters; and the learning-rate control
// (schedule, warm-up, scaling with the number of workers) it describes.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "optim/asgd.h"
#include "optim/lr_control.h"
#include "optim/optimizer.h"
#include "tasks/common/config.pb.h"

namespace ts::tasks {

using NamedParameters = std::vector<std::pair<std::string, autograd::Variable>>;

// SGD with its defaults when the config chooses none. The lr it starts with
// is the per-worker one; the trainer sets each epoch's lr. Throws an Error
// for settings the optimizer rejects.
std::unique_ptr<optim::Optimizer> make_optimizer(const TaskConfig& config, const NamedParameters& params);

// NT-ASGD's averaged SGD, which an SGD run with sgd.nt_asgd_nonmono > 0
// switches to: torch.optim.ASGD with t0 0, lambd 0 and the SGD settings' lr
// and weight decay, as AWD-LSTM builds it.
std::unique_ptr<optim::Asgd> make_nt_asgd(const TaskConfig& config, const NamedParameters& params);

// The lr control for `world_size` workers: the configured per-worker lr
// (configured_lr) scaled by `scaling` (the recipe's rule), the config's
// warm-up and schedule.
optim::LrControlOptions lr_control_options(const TaskConfig& config, int world_size, optim::LrScaling scaling);

}  // namespace ts::tasks
