// Time to accuracy: the first run time at which an evaluated metric reached
// its target (metric >= target, or <= for a metric to minimize such as
// perplexity), or "not reached". The state is a
// TargetState message of the run state, so checkpoints carry it.
#pragma once

#include <string>

#include "base/json.h"
#include "tasks/common/run_state.pb.h"

namespace ts::tasks {

class TimeToTarget {
 public:
  // `state` must outlive it.
  TimeToTarget(std::string metric, double target, bool minimize, TargetState* state)
      : metric_(std::move(metric)), target_(target), minimize_(minimize), state_(state) {}

  // One evaluation at `elapsed_seconds` of run time, after `epoch` (1-based
  // count of epochs done). Returns true when this evaluation first reaches it.
  bool observe(double value, double elapsed_seconds, int epoch);

  const std::string& metric() const { return metric_; }
  bool reached() const { return state_->reached(); }
  // {"metric", "target", "minimize", "reached", "seconds" (or "not
  //  reached"), "epoch", "best"}.
  Json to_json() const;

 private:
  std::string metric_;
  double target_;
  bool minimize_;
  TargetState* state_;
};

}  // namespace ts::tasks
