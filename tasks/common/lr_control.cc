#include "tasks/common/lr_control.h"

#include <vector>

#include "tensor/status_macros.h"

namespace ts::tasks {

absl::StatusOr<LrControl> LrControl::create(const TaskConfig& config, int world_size,
                                            optim::LrScaling scaling) {
  ASSIGN_OR_RETURN(const double lr, optim::scale_lr(config.lr(), world_size, scaling));
  int64_t warmup = static_cast<int64_t>(config.warmup_epochs());
  if (warmup == 0 && scaling == optim::LrScaling::kLinear) {
    warmup = optim::mlbench_warmup_epochs(world_size);
  }
  const double warmup_start = config.lr();
  LrControl control;
  std::unique_ptr<optim::LrSchedule> main;
  switch (config.lr_schedule()) {
    case TaskConfig::PLATEAU: {
      optim::PlateauOptions options;
      options.factor = config.lr_decay_factor();
      options.patience = config.lr_patience();
      options.min_lr = config.lr_min();
      ASSIGN_OR_RETURN(optim::ReduceLrOnPlateau plateau,
                       optim::ReduceLrOnPlateau::create(lr, options, {warmup, warmup_start}));
      control.plateau_ = std::move(plateau);
      return control;
    }
    case TaskConfig::STEP: {
      ASSIGN_OR_RETURN(main, optim::step_lr(lr, config.lr_step_epochs(), config.lr_decay_factor()));
      break;
    }
    case TaskConfig::MULTISTEP: {
      std::vector<int64_t> milestones(config.lr_milestones().begin(), config.lr_milestones().end());
      ASSIGN_OR_RETURN(main, optim::multi_step_lr(lr, milestones, config.lr_decay_factor()));
      break;
    }
    case TaskConfig::COSINE: {
      ASSIGN_OR_RETURN(main, optim::cosine_lr(lr, warmup, config.epochs(), config.lr_min()));
      break;
    }
    default:
      main = optim::constant_lr(lr);
  }
  if (warmup > 0) {
    ASSIGN_OR_RETURN(main, optim::linear_warmup(warmup_start, warmup, std::move(main)));
  }
  control.schedule_ = std::move(main);
  return control;
}

double LrControl::lr(int epoch) const {
  return plateau_ ? plateau_->lr() : schedule_->get_lr(epoch);
}

void LrControl::end_epoch(double validation_loss) {
  if (plateau_) plateau_->step(validation_loss);
}

absl::StatusOr<optim::NamedTensors> LrControl::state() const {
  if (plateau_) return plateau_->state();
  return optim::NamedTensors{};
}

absl::Status LrControl::load_state(const optim::NamedTensors& state) {
  if (plateau_) return plateau_->load_state(state);
  return absl::OkStatus();
}

}  // namespace ts::tasks
