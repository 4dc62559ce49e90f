#include "tasks/common/time_to_target.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ts::tasks {

TimeToTarget::TimeToTarget(std::string metric, double target, bool minimize, TargetState* state)
    : metric_(std::move(metric)), target_(target), minimize_(minimize), state_(state) {
  if (state_->metric().empty()) {
    state_->set_metric(metric_);
    state_->set_target(target_);
    state_->set_minimize(minimize_);
  }
}

absl::Status check_same_target(const TargetState& saved, absl::string_view which, absl::string_view metric,
                               double target, bool minimize) {
  if (saved.metric().empty()) return absl::OkStatus();  // written before the marks
  if (saved.metric() == metric && saved.target() == target && saved.minimize() == minimize) return absl::OkStatus();
  const auto goal = [](absl::string_view m, double t, bool min) { return absl::StrCat(m, min ? " <= " : " >= ", t); };
  return absl::FailedPreconditionError(absl::StrCat(
      "the checkpoint times ", goal(saved.metric(), saved.target(), saved.minimize()), " and this run's ", which,
      " is ", goal(metric, target, minimize),
      "; a run resumes with the targets it was written with (its time to the old one would stand for the new)"));
}

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
