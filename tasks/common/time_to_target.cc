#include "tasks/common/time_to_target.h"

namespace ts::tasks {

bool TimeToTarget::observe(double value, double elapsed_seconds, int epoch) {
  if (!has_best_ || value > best_) best_ = value;
  has_best_ = true;
  if (reached_ || !(value >= target_)) return false;  // NaN never reaches
  reached_ = true;
  seconds_ = elapsed_seconds;
  epoch_ = epoch;
  return true;
}

Json TimeToTarget::to_json() const {
  Json j = Json::object();
  j["metric"] = metric_;
  j["target"] = target_;
  j["reached"] = reached_;
  j["seconds"] = reached_ ? Json(seconds_) : Json("not reached");
  j["epoch"] = reached_ ? Json(epoch_) : Json();
  j["best"] = has_best_ ? Json(best_) : Json();
  return j;
}

void TimeToTarget::restore(bool reached, double seconds, int epoch, bool has_best, double best) {
  reached_ = reached;
  seconds_ = seconds;
  epoch_ = epoch;
  has_best_ = has_best;
  best_ = best;
}

}  // namespace ts::tasks
