#include "tasks/common/time_to_target.h"

namespace ts::tasks {

bool TimeToTarget::observe(double value, double elapsed_seconds, int epoch) {
  if (!state_->has_best() || value > state_->best()) state_->set_best(value);
  state_->set_has_best(true);
  if (state_->reached() || !(value >= target_)) return false;  // NaN never reaches
  state_->set_reached(true);
  state_->set_seconds(elapsed_seconds);
  state_->set_epoch(epoch);
  return true;
}

Json TimeToTarget::to_json() const {
  Json j = Json::object();
  j["metric"] = metric_;
  j["target"] = target_;
  j["reached"] = state_->reached();
  j["seconds"] = state_->reached() ? Json(state_->seconds()) : Json("not reached");
  j["epoch"] = state_->reached() ? Json(state_->epoch()) : Json();
  j["best"] = state_->has_best() ? Json(state_->best()) : Json();
  return j;
}

}  // namespace ts::tasks
