// The learning rate of a training run, epoch by epoch: the per-worker lr
// scaled to the world size, an optional linear warm-up, then a schedule -
// closed-form (constant, step, multi-step, cosine) or MLBench's
// reduce-on-plateau with its warm-up, stepped with the validation loss.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "optim/lr_schedule.h"
#include "optim/named_state.h"

namespace ts::optim {

struct LrControlOptions {
  enum class Schedule { kConstant, kStep, kMultiStep, kCosine, kPlateau };

  double lr = 0.1;  // per worker
  int world_size = 1;
  LrScaling scaling = LrScaling::kLinear;
  // Linear warm-up from the per-worker lr to the scaled one, in whole
  // epochs; 0 means MLBench's for the scaling rule (mlbench_warmup_epochs:
  // floor(log2(world_size)) under linear scaling, 3 * world_size under
  // square-root scaling).
  double warmup_epochs = 0;
  // The warm-up rises step by step within each epoch (Goyal et al.'s gradual
  // warm-up, as apex's ImageNet example does it) rather than once per epoch
  // (MLBench's). Not for the plateau schedule, whose warm-up is MLBench's.
  bool warmup_per_step = false;
  int epochs = 1;  // the run's length (the cosine's end)
  Schedule schedule = Schedule::kConstant;
  double decay_factor = 0.1;        // step, multi-step, plateau
  int64_t step_epochs = 30;         // step
  std::vector<int64_t> milestones;  // multi-step
  int64_t patience = 10;            // plateau
  double threshold = 1e-4;          // plateau: relative, or absolute with
  bool threshold_absolute = false;  // threshold_absolute
  double min_lr = 0;                // cosine, plateau
};

class LrControl {
 public:
  // Throws an Error for options the schedules reject, naming the field.
  explicit LrControl(const LrControlOptions& options);

  // The lr for epoch `epoch` (0-based), `fraction` (in [0, 1)) of the way
  // through it: only a per-step warm-up tells fractions apart.
  double lr(int epoch, double fraction = 0) const;
  // After an epoch's evaluation (plateau only; the others ignore it).
  void end_epoch(double validation_loss);

  // The plateau's state (none for closed-form schedules: their only state is
  // the epoch, which the trainer restores).
  NamedTensors state() const;
  absl::Status load_state(const NamedTensors& state);

 private:
  std::unique_ptr<LrSchedule> schedule_;
  std::optional<ReduceLrOnPlateau> plateau_;
  int64_t per_step_warmup_epochs_ = 0;  // 0 unless warmup_per_step
};

}  // namespace ts::optim
