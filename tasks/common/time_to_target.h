// Time to accuracy: the first run time at which an evaluated metric reached
// its target (metric >= target, or <= for a metric to minimize such as
// perplexity), or "not reached". The state is a
// TargetState message of the run state, so checkpoints carry it.
#pragma once

#include <string>

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
  // `state` must outlive it.
  TimeToTarget(std::string metric, double target, bool minimize, TargetState* state)
      : metric_(std::move(metric)), target_(target), minimize_(minimize), state_(state) {}

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

}  // namespace ts::tasks
