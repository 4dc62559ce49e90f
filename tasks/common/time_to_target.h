// Time to accuracy: the first run time at which an evaluated metric reached
// its target (metric >= target, or <= for a metric to minimize such as
// perplexity), or "not reached". The state is a
// TargetState message of the run state, so checkpoints carry it.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/json.h"
#include "tasks/common/run_state.pb.h"

namespace ts::tasks {

// When an evaluation happened: run time (wall, all sessions), the training
// steps' share of it, and epochs done (1-based count).
struct RunTime {
  double wall_seconds = 0;
  double train_seconds = 0;
  int epoch = 0;
};

class TimeToTarget {
 public:
  // `state` must outlive it; a new state (no metric yet) is marked with this
  // target.
  TimeToTarget(std::string metric, double target, bool minimize, TargetState* state);

  // One evaluation's value, at `at`. Returns true when this evaluation first
  // reaches the target.
  bool observe(double value, const RunTime& at);

  const std::string& metric() const { return metric_; }
  bool reached() const { return state_->reached(); }
  // {"metric", "target", "minimize", "reached", "seconds" (run time, or "not
  //  reached"), "train_seconds" (MLBench's), "epoch", "best"}.
  Json to_json() const;
  // For the run's last line: "accuracy reached 0.9 in epoch 3 (41.2 s)",
  // "accuracy did not reach 0.9 (best 0.8712)", or "accuracy not evaluated".
  std::string summary() const;

 private:
  std::string metric_;
  double target_;
  bool minimize_;
  TargetState* state_;
};

// OK when `saved` (restored from a checkpoint) times `metric` against
// `target` in the same direction, or predates the marks; otherwise an error
// naming both, with `which` ("target_metric", "more_targets[1]") saying
// which of the config's targets it is. A state of another target would
// carry that target's "reached" into this run.
absl::Status check_same_target(const TargetState& saved, absl::string_view which, absl::string_view metric,
                               double target, bool minimize);

}  // namespace ts::tasks
