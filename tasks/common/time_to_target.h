// Time to accuracy: the first run time at which an evaluated metric reached
// its target (metric >= target), or "not reached".
#pragma once

#include <string>

#include "tasks/common/json.h"

namespace ts::tasks {

class TimeToTarget {
 public:
  TimeToTarget(std::string metric, double target) : metric_(std::move(metric)), target_(target) {}

  // One evaluation at `elapsed_seconds` of run time, after `epoch` (1-based
  // count of epochs done). Returns true when this evaluation first reaches it.
  bool observe(double value, double elapsed_seconds, int epoch);

  const std::string& metric() const { return metric_; }
  double target() const { return target_; }
  bool reached() const { return reached_; }
  double seconds() const { return seconds_; }  // meaningful once reached()
  int epoch() const { return epoch_; }
  bool has_best() const { return has_best_; }
  double best() const { return best_; }  // highest value seen

  // {"metric", "target", "reached", "seconds" (or "not reached"), "epoch",
  //  "best"}.
  Json to_json() const;

  // For run-state checkpoints.
  void restore(bool reached, double seconds, int epoch, bool has_best, double best);

 private:
  std::string metric_;
  double target_;
  bool reached_ = false;
  double seconds_ = 0;
  int epoch_ = 0;
  bool has_best_ = false;
  double best_ = 0;
};

}  // namespace ts::tasks
