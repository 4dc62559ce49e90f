#include "optim/lr_control.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"

namespace ts::optim {

LrControl::LrControl(const LrControlOptions& o) {
  const double lr = scale_lr(o.lr, o.world_size, o.scaling);
  int64_t warmup = static_cast<int64_t>(o.warmup_epochs);
  if (warmup == 0) warmup = mlbench_warmup_epochs(o.world_size, o.scaling);
  using Schedule = LrControlOptions::Schedule;
  TS_CHECK(!(o.warmup_per_step && o.schedule == Schedule::kPlateau),
           "LrControl: the plateau schedule's warm-up is MLBench's, once per epoch, not per step");
  if (o.schedule == Schedule::kPlateau) {
    PlateauOptions plateau;
    plateau.factor = o.decay_factor;
    plateau.patience = o.patience;
    plateau.threshold = o.threshold;
    plateau.threshold_mode =
        o.threshold_absolute ? PlateauOptions::ThresholdMode::kAbs : PlateauOptions::ThresholdMode::kRel;
    plateau.min_lr = o.min_lr;
    plateau_.emplace(lr, plateau, PlateauWarmup{warmup, o.lr});
    return;
  }
  switch (o.schedule) {
    case Schedule::kStep:
      schedule_ = step_lr(lr, o.step_epochs, o.decay_factor);
      break;
    case Schedule::kMultiStep:
      schedule_ = multi_step_lr(lr, o.milestones, o.decay_factor);
      break;
    case Schedule::kCosine:
      TS_CHECK(warmup < o.epochs, "lr_schedule COSINE: its warm-up of ", warmup, " epochs",
               o.warmup_epochs == 0 ? absl::StrCat(" (warmup_epochs 0: MLBench's for ", o.world_size, " workers)")
                                    : std::string(" (warmup_epochs)"),
               " leaves no epoch to decay over in a run of ", o.epochs, " (epochs)");
      schedule_ = cosine_lr(lr, warmup, o.epochs, o.min_lr);
      break;
    default:
      schedule_ = constant_lr(lr);
  }
  if (warmup > 0) schedule_ = linear_warmup(o.lr, warmup, std::move(schedule_));
  if (o.warmup_per_step) per_step_warmup_epochs_ = warmup;
}

double LrControl::lr(int epoch, double fraction) const {
  if (plateau_) return plateau_->lr();
  return schedule_->get_lr(epoch < per_step_warmup_epochs_ ? epoch + fraction : epoch);
}

void LrControl::end_epoch(double validation_loss) {
  if (plateau_) plateau_->step(validation_loss);
}

NamedTensors LrControl::state() const { return plateau_ ? plateau_->state() : NamedTensors{}; }

absl::Status LrControl::load_state(const NamedTensors& state) {
  return plateau_ ? plateau_->load_state(state) : absl::OkStatus();
}

}  // namespace ts::optim
