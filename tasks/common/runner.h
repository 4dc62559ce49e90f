// The task runner: every task binary hands its train step, evaluation and
// state (de)serialization to a Runner, which owns the config, device, seeds,
// epoch loop, progress line, checkpoints and --resume, the JSON report and
// TensorBoard events.
//
//   int main(int argc, char** argv) {
//     absl::ParseCommandLine(argc, argv);
//     auto runner = ts::tasks::Runner::from_flags("tasks/mytask/config.textproto");
//     if (!runner.ok()) { fprintf(stderr, "%s\n", ...); return 1; }
//     ts::tasks::TaskHooks hooks = ...;  // closures over the task's model
//     auto summary = (*runner)->run(hooks);
//     return summary.ok() ? 0 : 1;
//   }
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tasks/common/config.pb.h"
#include "tasks/common/environment.h"
#include "tasks/common/event_writer.h"
#include "tasks/common/report.h"
#include "tasks/common/time_buckets.h"
#include "tensor/device.h"

namespace ts::tasks {

struct StepResult {
  double loss = 0;
  int64_t samples = 0;  // samples this step trained on (this rank)
};

using Metrics = std::map<std::string, double>;
using StateBlobs = std::map<std::string, std::string>;

// What a task provides. Required: steps_per_epoch, train_step, evaluate;
// save_state and restore_state when checkpoint_dir is set.
struct TaskHooks {
  // Steps (batches) of `epoch` (0-based) on this rank.
  std::function<int64_t(int epoch)> steps_per_epoch;
  // Called before an epoch's first step: reshuffle (with Runner::rng()), set
  // the LR for the epoch. A mid-epoch resume calls it again with the random
  // streams as they were at that epoch's start, so shuffles repeat exactly.
  std::function<absl::Status(int epoch)> begin_epoch;
  std::function<absl::StatusOr<StepResult>(int epoch, int64_t step)> train_step;
  // Metrics on the evaluation set; must include config().target_metric().
  std::function<absl::StatusOr<Metrics>(int epoch)> evaluate;
  // The task's state as named opaque blobs (model and optimizer state_dicts,
  // LR scheduler, ...), and its restoration from them.
  std::function<absl::StatusOr<StateBlobs>()> save_state;
  std::function<absl::Status(const StateBlobs&)> restore_state;
  // The learning rate now, for the report and TensorBoard.
  std::function<double()> current_lr;
};

struct RunnerOptions {
  int world_size = 1;
  int rank = 0;  // only rank 0 prints, writes the report, events and checkpoints
  int local_rank = 0;  // the GPU of "auto" and "cuda" devices
  std::FILE* progress_out = stdout;  // null: quiet
  // Monotonic seconds: step times, run time, checkpoint intervals. Tests
  // substitute a fake clock.
  std::function<double()> clock;
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

class Runner {
 public:
  // After absl::ParseCommandLine: the config from flags (flags.h), then create().
  static absl::StatusOr<std::unique_ptr<Runner>> from_flags(absl::string_view default_config_path,
                                                            RunnerOptions options = {});
  // Validates the config, selects the device and seeds every RNG.
  static absl::StatusOr<std::unique_ptr<Runner>> create(TaskConfig config, RunnerOptions options = {});
  ~Runner();

  const TaskConfig& config() const { return config_; }
  const Device& device() const { return device_; }
  int world_size() const { return options_.world_size; }
  int rank() const { return options_.rank; }
  // Host-side randomness (shuffles); saved in checkpoints.
  std::mt19937_64& rng() { return rng_; }
  // Feed "communication" (and any other) time here; the report lists it.
  TimeBuckets& timers() { return timers_; }
  // Free-form report sections: report().extra("allreduce") = ...
  Report& report() { return report_; }
  // TensorBoard scalars beyond the runner's own (nullptr except on rank 0
  // during run()).
  EventWriter* tensorboard() { return events_.get(); }

  // Call once per Runner. Trains from the start (or, with config().resume(),
  // from the checkpoint) to the configured epochs or max_steps. Writes
  // output_dir/report.json after every epoch and at the end, and
  // checkpoint_dir/run_state.ckpt every checkpoint_interval_minutes, at
  // epoch ends and when max_steps stops the run mid-epoch.
  absl::StatusOr<RunSummary> run(const TaskHooks& hooks);

  std::string report_path() const;
  std::string checkpoint_path() const;

 private:
  struct Loop;  // the state of one run() call
  Runner(TaskConfig config, RunnerOptions options, Device device);
  double now() const { return options_.clock(); }
  absl::Status restore(const TaskHooks& hooks, Loop& loop);
  absl::Status save_checkpoint(const TaskHooks& hooks, const Loop& loop);
  absl::Status finish_epoch(const TaskHooks& hooks, Loop& loop, bool evaluate);
  absl::Status write_report(const Loop& loop);

  TaskConfig config_;
  RunnerOptions options_;
  Device device_;
  std::mt19937_64 rng_;
  TimeBuckets timers_;
  Report report_;
  std::unique_ptr<EventWriter> events_;
};

}  // namespace ts::tasks
