// When to checkpoint: every N minutes of run time (and, decided by the
// runner, at every epoch end). N = 0 turns the timed checkpoints off.
#pragma once

namespace ts::tasks {

class CheckpointSchedule {
 public:
  // Times are seconds on any monotonic clock; the first interval starts at `now`.
  CheckpointSchedule(double interval_minutes, double now) : interval_(interval_minutes * 60), last_(now) {}

  bool due(double now) const { return interval_ > 0 && now - last_ >= interval_; }
  // Any checkpoint (timed or epoch end) restarts the interval.
  void saved(double now) { last_ = now; }

 private:
  double interval_;
  double last_;
};

}  // namespace ts::tasks
