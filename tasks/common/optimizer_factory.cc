#include "tasks/common/optimizer_factory.h"

#include "base/error.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "tasks/common/config.h"

namespace ts::tasks {

std::unique_ptr<optim::Optimizer> make_optimizer(const TaskConfig& config, const NamedParameters& params) {
  switch (config.optimizer_case()) {
    case TaskConfig::kSgd:
    case TaskConfig::OPTIMIZER_NOT_SET: {
      const SgdConfig& c = config.sgd();  // the defaults when not set
      optim::SgdOptions options;
      options.lr = c.lr();
      options.momentum = c.momentum();
      options.dampening = c.dampening();
      options.weight_decay = c.weight_decay();
      options.nesterov = c.nesterov();
      return std::make_unique<optim::Sgd>(params, options);
    }
    case TaskConfig::kAdam: {
      const AdamConfig& c = config.adam();
      optim::AdamOptions options;
      options.lr = c.lr();
      options.beta1 = c.beta1();
      options.beta2 = c.beta2();
      options.eps = c.eps();
      options.weight_decay = c.weight_decay();
      options.amsgrad = c.amsgrad();
      options.decoupled_weight_decay = c.decoupled_weight_decay();
      return std::make_unique<optim::Adam>(params, options);
    }
  }
  throw_error(absl::StatusCode::kInvalidArgument, "unknown optimizer in the config");
}

std::unique_ptr<optim::Asgd> make_nt_asgd(const TaskConfig& config, const NamedParameters& params) {
  optim::AsgdOptions options;
  options.lr = config.sgd().lr();
  options.lambd = 0;
  options.t0 = 0;
  options.weight_decay = config.sgd().weight_decay();
  return std::make_unique<optim::Asgd>(params, options);
}

optim::LrControlOptions lr_control_options(const TaskConfig& c, int world_size, optim::LrScaling scaling) {
  optim::LrControlOptions o;
  o.lr = configured_lr(c);
  o.world_size = world_size;
  o.scaling = scaling;
  o.warmup_epochs = c.warmup_epochs();
  o.warmup_per_step = c.lr_warmup_per_step();
  o.epochs = c.epochs();
  o.decay_factor = c.lr_decay_factor();
  o.step_epochs = c.lr_step_epochs();
  o.milestones.assign(c.lr_milestones().begin(), c.lr_milestones().end());
  o.patience = c.lr_patience();
  o.threshold = c.lr_plateau_threshold();
  o.threshold_absolute = c.lr_plateau_threshold_absolute();
  o.min_lr = c.lr_min();
  switch (c.lr_schedule()) {
    case TaskConfig::STEP:
      o.schedule = optim::LrControlOptions::Schedule::kStep;
      break;
    case TaskConfig::MULTISTEP:
      o.schedule = optim::LrControlOptions::Schedule::kMultiStep;
      break;
    case TaskConfig::COSINE:
      o.schedule = optim::LrControlOptions::Schedule::kCosine;
      break;
    case TaskConfig::PLATEAU:
      o.schedule = optim::LrControlOptions::Schedule::kPlateau;
      break;
    default:
      o.schedule = optim::LrControlOptions::Schedule::kConstant;
  }
  return o;
}

}  // namespace ts::tasks
