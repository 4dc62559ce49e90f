// The trainer: the one training loop every task binary runs, over the task's
// Recipe (recipe.h). It owns what is the same for every task:
//   - the device, the model's move to it, and the generator's state in checkpoints;
//   - DDP over the run's communicator (begin_step before each forward; the
//     gradient averaging overlapped with the backward);
//   - the optimizer the config chooses (and NT-ASGD's switch to averaged SGD,
//     whose averages evaluation then reads), the learning rate (per-worker lr
//     scaled by the recipe's rule, warm-up, schedule), gradient accumulation;
//   - mixed precision (dtype F16/BF16, apex O2): the model cast but for batch
//     norm, inputs cast, the loss scaled, the gradients unscaled into f32
//     master weights that the optimizer steps, overflowing steps skipped;
//   - the loaders (shuffled and sharded across ranks), evaluation every
//     eval_every_epochs epochs and time to the target metric;
//   - the progress line, TensorBoard events and the JSON report (rank 0),
//     with scaling efficiency against a baseline report and MLBench's price
//     figures when the config asks for them;
//   - checkpoints (timed, at epoch ends, at max_steps) and bit-exact resume.
// Losses stay on the device until the progress line, an epoch's record or a
// checkpoint reads them; on CUDA step times come from events. The run's
// state is one RunState message (run_state.proto), updated in place and
// written as is to checkpoints.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "tasks/common/config.pb.h"
#include "tasks/common/recipe.h"
#include "tasks/common/report.h"
#include "tasks/common/run_state.pb.h"
#include "tensor/device.h"

namespace ts::tasks {

class TimeToTarget;

struct TrainerOptions {
  int world_size = 1;
  int rank = 0;  // only rank 0 prints, writes the report, events and checkpoints
  // Joins the ranks (DDP, evaluation sums); null: one process without DDP.
  collectives::Communicator* comm = nullptr;
  std::FILE* progress_out = stdout;  // null: quiet
  // Whether progress_out is a terminal to redraw a line on (default: see
  // ProgressLine::for_stream).
  std::optional<bool> terminal;
  // Monotonic seconds: run time, progress, checkpoint intervals and (on the
  // CPU) step times. Tests substitute a fake clock.
  std::function<double()> clock;
  // The signal that asks the run to stop (0: none), read after each step:
  // by default StopSignals::received() (stop_signals.h), which sees signals
  // only while a StopSignals lives, as run_task's does. The run then saves a
  // checkpoint (with checkpoint_dir) and its report, and ends with a
  // kCancelled error that says how to resume.
  std::function<int()> stop_signal;
};

struct RunSummary {
  int epochs_completed = 0;
  int64_t global_step = 0;
  double elapsed_seconds = 0;
  double last_loss = 0;
  Metrics last_metrics;
  bool target_reached = false;
  bool resumed = false;
};

class Trainer {
 public:
  // Validates the config, moves the recipe's model to `device`, wraps it in
  // DDP when there is a communicator, and builds the optimizer, the
  // learning-rate control and the loaders. `recipe` must outlive the trainer.
  // The model's initial weights and the run's later random draws (dropout)
  // come from ts::default_generator(): seed it with the config's seed before
  // the recipe builds its model, as run_task does.
  static absl::StatusOr<std::unique_ptr<Trainer>> create(TaskConfig config, Device device, Recipe& recipe,
                                                         TrainerOptions options = {});
  ~Trainer();

  // Call once. Trains from the start (or, with config().resume(), from the
  // checkpoint) to the configured epochs or max_steps. Writes
  // output_dir/report.json after every epoch and at the end, and
  // checkpoint_dir/run_state.ckpt every checkpoint_interval_minutes, at epoch
  // ends and when max_steps stops the run mid-epoch. An error (a reader's, a
  // rank's, an Error the recipe threw) names the epoch and step.
  absl::StatusOr<RunSummary> run();

  const TaskConfig& config() const { return config_; }
  Device device() const { return device_; }
  // Free-form report sections: report().extra("allreduce") = ...
  Report& report() { return report_; }
  std::string report_path() const;
  std::string checkpoint_path() const;

 private:
  struct Parts;  // the loaders, optimizer, lr control, DDP and loop helpers
  Trainer(TaskConfig config, Device device, Recipe& recipe, TrainerOptions options);

  double now() const { return options_.clock(); }
  double elapsed() const;
  bool leader() const { return options_.rank == 0; }
  int64_t steps_per_epoch() const;

  absl::Status read_baseline();
  // On several ranks, each rank's outcome of a stage that may fail on some
  // ranks only (its own losses, rank 0's files, a rank's read): all ranks
  // fail together, each with its own error or one naming the rank that
  // failed `stage`, rather than the others running on into a collective that
  // rank never joins and waiting out its timeout. Every rank calls it.
  absl::Status agree(absl::Status mine, absl::string_view stage);
  absl::Status train_step(int64_t& samples, Tensor& loss);
  absl::Status absorb();
  // Every rank takes in its losses; rank 0 updates the line.
  absl::Status show_progress(int64_t steps);
  absl::StatusOr<Metrics> evaluate(int epoch);
  absl::Status finish_epoch(bool evaluate);
  // NT-ASGD: after an evaluation, switches to averaged SGD when the
  // evaluated loss is worse than the best but the last nonmono ones.
  // The target and config.more_targets.
  std::vector<TimeToTarget*> all_targets();
  absl::Status maybe_switch_to_asgd(const EpochRecord& record);
  absl::Status switch_to_asgd(int epoch);
  absl::Status save_checkpoint();
  absl::Status write_checkpoint(const nn::NamedTensors& ranks_state);  // rank 0's part
  absl::Status restore();
  // On several ranks, after each restored the checkpoint: fails on every
  // rank unless all read the same run (its position, run time and random
  // state), as they do from one shared checkpoint_dir. Each rank reads the
  // file by itself and rank 0 alone writes it, so a node-local directory
  // holding an older file of the same shape would start the replicas apart.
  absl::Status check_ranks_restored_alike();
  RunShape run_shape() const;  // this run's, which a checkpoint it resumes must match
  Json time_breakdown() const;
  Json price_figures(double elapsed_seconds) const;  // MLBench's
  absl::Status write_report();
  // After a stop signal: checkpoint, report, and the kCancelled error.
  absl::Status stop_for(int signal);

  TaskConfig config_;
  Device device_;
  Recipe& recipe_;
  TrainerOptions options_;
  std::unique_ptr<Parts> parts_;
  Report report_;
  // Persistent state: written to checkpoints as is.
  RunState state_;

  // This session.
  double session_start_ = 0;
  double session_start_wall_ = 0;    // then, in seconds since the epoch (TensorBoard's wall times)
  double elapsed_before_ = 0;        // run time of earlier sessions
  double epoch_session_start_ = 0;   // when this session began the current epoch
  double epoch_seconds_before_ = 0;  // the current epoch's time in earlier sessions
  int64_t session_steps_ = 0;
  // This session's timed steps, as absorbed: all of them, and those past the
  // warm-up (which the report counts).
  struct StepTotals {
    int64_t steps = 0;
    int64_t samples = 0;
    double seconds = 0;
    void add(double step_seconds, int64_t step_samples) {
      ++steps;
      samples += step_samples;
      seconds += step_seconds;
    }
  };
  StepTotals session_timed_, session_counted_;
  // What the progress line and TensorBoard show: the counted steps, as the
  // report does, or the warm-up's while there are none yet.
  const StepTotals& session_timing() const { return session_counted_.steps > 0 ? session_counted_ : session_timed_; }
  double session_samples_per_second() const;
  double last_loss_ = 0;
  Metrics last_metrics_;
  bool resumed_ = false;
  int stopped_by_signal_ = 0;  // the stop signal this session ended on
};

}  // namespace ts::tasks
