// Step times of a training run: exact percentiles over every recorded step
// after the warm-up steps, throughput in samples per second, and the mean
// step's split into communication and compute. The numbers live in a
// StepStats message of the run state (so checkpoints carry them); this class
// records into it and reads it.
#pragma once

#include <cstdint>

#include "base/json.h"
#include "tasks/common/run_state.pb.h"

namespace ts::tasks {

class StepTimes {
 public:
  // The first `warmup_steps` steps recorded by this object are left out of
  // the percentiles (a resumed run warms up again: allocator, cuDNN
  // autotuning, page cache). `stats` must outlive it.
  StepTimes(StepStats* stats, int warmup_steps) : stats_(stats), warmup_steps_(warmup_steps) {}
  // Whether the step counted (was past this session's warm-up).
  bool record(double seconds, int64_t samples);
  // The time the steps recorded since the last call waited on communication,
  // in one sum (DDP measures no single step's). It counts toward the
  // per-step figures only when none of those steps was a warm-up step: a
  // caller also takes a reading right at the end of the warm-up (the
  // trainer does), so that no sum mixes the two.
  void record_communication(double seconds);

  // Steps and samples counted (after warm-up), and their total time.
  int64_t steps() const { return stats_->counted_seconds_size(); }
  int64_t samples() const { return stats_->counted_samples(); }
  double counted_seconds() const;
  // The p-th percentile (p in [0, 100]) of the counted step times, linear
  // between closest ranks (NumPy's default); NaN with no counted step.
  double percentile(double p) const;
  // Counted samples / counted seconds; NaN with no counted step.
  double samples_per_second() const;
  // {"steps", "warmup_steps" (left out, over every session), "samples", "samples_per_s",
  //  "global_samples_per_s", "mean_s", "p50_s", "p75_s", "p90_s", "p95_s",
  //  "step_seconds": [every counted step's time, in order]}; null for values
  //  without data. The global rate is world_size times this rank's: DDP keeps
  //  the ranks in lock step, each with a batch of its own.
  Json to_json(int world_size = 1) const;
  // Means over the counted steps: {"step_s", "communication_s", "compute_s"},
  // compute being the step time not spent waiting on communication; null
  // values without a counted step.
  Json per_step_json() const;

 private:
  // total / steps(); NaN with no counted step.
  double per_counted_step(double total) const;

  StepStats* stats_;
  int warmup_steps_;
  int64_t seen_ = 0;  // steps recorded by this object, warm-up included
  bool warmup_since_communication_ = false;
};

}  // namespace ts::tasks
