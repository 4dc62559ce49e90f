// Step times of a training run: exact percentiles over every recorded step
// after the warm-up steps, and throughput in samples per second.
#pragma once

#include <cstdint>
#include <vector>

#include "tasks/common/json.h"

namespace ts::tasks {

class StepTimes {
 public:
  // The first `warmup_steps` steps recorded by this object are left out (a
  // resumed run warms up again: allocator, cuDNN autotuning, page cache).
  explicit StepTimes(int warmup_steps) : warmup_steps_(warmup_steps) {}

  void record(double seconds, int64_t samples);

  // Steps and samples counted (after warm-up), and their total time.
  int64_t steps() const { return static_cast<int64_t>(seconds_.size()); }
  int64_t samples() const { return samples_; }
  double total_seconds() const;

  // The p-th percentile (p in [0, 100]) of the counted step times, linear
  // between closest ranks (NumPy's default); NaN with no counted step.
  double percentile(double p) const;
  // Counted samples / counted seconds; NaN with no counted step.
  double samples_per_second() const;

  // {"steps", "warmup_steps", "samples", "samples_per_s", "mean_s", "p50_s",
  //  "p75_s", "p90_s", "p95_s"}; null for values without data.
  Json to_json() const;

  // For run-state checkpoints: the counted data, restored by restore().
  const std::vector<double>& counted_seconds() const { return seconds_; }
  void restore(std::vector<double> counted_seconds, int64_t counted_samples);

 private:
  int warmup_steps_;
  int64_t seen_ = 0;  // steps recorded by this object, warm-up included
  std::vector<double> seconds_;
  int64_t samples_ = 0;
};

}  // namespace ts::tasks
