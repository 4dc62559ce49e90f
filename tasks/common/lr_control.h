// The learning rate of a task run from its config: the per-worker lr scaled
// to the world size, an optional linear warm-up, then the configured
// schedule, all counted in epochs. PLATEAU is MLBench's reduce-on-plateau
// with its warm-up (optim/lr_schedule.h), stepped with the validation loss.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "optim/lr_schedule.h"
#include "tasks/common/config.pb.h"

namespace ts::tasks {

class LrControl {
 public:
  // Warm-up: config.warmup_epochs when set, else (linear scaling with more
  // than one worker) MLBench's floor(log2(world_size)) epochs from the
  // single-worker lr.
  static absl::StatusOr<LrControl> create(const TaskConfig& config, int world_size,
                                          optim::LrScaling scaling);

  // The lr for epoch `epoch` (0-based).
  double lr(int epoch) const;
  // After epoch's evaluation (plateau only; others ignore it).
  void end_epoch(double validation_loss);

  // The plateau state (empty for closed-form schedules: their only state is
  // the epoch, which the runner restores).
  absl::StatusOr<optim::NamedTensors> state() const;
  absl::Status load_state(const optim::NamedTensors& state);

 private:
  LrControl() = default;
  std::shared_ptr<optim::LrSchedule> schedule_;
  std::optional<optim::ReduceLrOnPlateau> plateau_;
};

}  // namespace ts::tasks
