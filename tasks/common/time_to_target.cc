#include "tasks/common/time_to_target.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ts::tasks {

bool TimeToTarget::observe(double value, const RunTime& at) {
  // A NaN evaluation is never the best, and never hides a later one.
  if (!std::isnan(value)) {
    const bool better = minimize_ ? value < state_->best() : value > state_->best();
    if (!state_->has_best() || better) state_->set_best(value);
    state_->set_has_best(true);
  }
  const bool reaches = minimize_ ? value <= target_ : value >= target_;  // NaN never reaches
  if (state_->reached() || !reaches) return false;
  state_->set_reached(true);
  state_->set_seconds(at.wall_seconds);
  state_->set_train_seconds(at.train_seconds);
  state_->set_epoch(at.epoch);
  return true;
}

Json TimeToTarget::to_json() const {
  Json j = Json::object();
  j["metric"] = metric_;
  j["target"] = target_;
  j["minimize"] = minimize_;
  j["reached"] = state_->reached();
  j["seconds"] = state_->reached() ? Json(state_->seconds()) : Json("not reached");
  j["train_seconds"] = state_->reached() ? Json(state_->train_seconds()) : Json();
  j["epoch"] = state_->reached() ? Json(state_->epoch()) : Json();
  j["best"] = state_->has_best() ? Json(state_->best()) : Json();
  return j;
}

std::string TimeToTarget::summary() const {
  if (state_->reached()) {
    return absl::StrFormat("%s reached %g in epoch %d (%.1f s)", metric_, target_, state_->epoch(), state_->seconds());
  }
  if (!state_->has_best()) return absl::StrCat(metric_, " not evaluated");
  return absl::StrFormat("%s did not reach %g (best %.6g)", metric_, target_, state_->best());
}

}  // namespace ts::tasks
