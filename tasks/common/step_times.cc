#include "tasks/common/step_times.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "base/percentile.h"

namespace ts::tasks {

bool StepTimes::record(double seconds, int64_t samples) {
  stats_->set_total_seconds(stats_->total_seconds() + seconds);
  if (seen_++ < warmup_steps_) {
    stats_->set_warmup_steps(stats_->warmup_steps() + 1);
    warmup_since_communication_ = true;
    return false;
  }
  stats_->add_counted_seconds(seconds);
  stats_->set_counted_samples(stats_->counted_samples() + samples);
  return true;
}

void StepTimes::record_communication(double seconds) {
  if (!warmup_since_communication_) {
    stats_->set_counted_communication_seconds(stats_->counted_communication_seconds() + seconds);
  }
  warmup_since_communication_ = false;
}

double StepTimes::counted_seconds() const {
  return std::accumulate(stats_->counted_seconds().begin(), stats_->counted_seconds().end(), 0.0);
}

double StepTimes::percentile(double p) const {
  return ts::percentile({stats_->counted_seconds().begin(), stats_->counted_seconds().end()}, p);
}

double StepTimes::samples_per_second() const {
  const double t = counted_seconds();
  if (steps() == 0 || t <= 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(samples()) / t;
}

double StepTimes::per_counted_step(double total) const {
  if (steps() == 0) return std::numeric_limits<double>::quiet_NaN();
  return total / static_cast<double>(steps());
}

Json StepTimes::to_json(int world_size) const {
  Json j = Json::object();
  j["steps"] = steps();
  j["warmup_steps"] = stats_->warmup_steps();
  j["samples"] = samples();
  j["samples_per_s"] = Json::finite_or_null(samples_per_second());
  j["global_samples_per_s"] = Json::finite_or_null(samples_per_second() * world_size);
  j["mean_s"] = Json::finite_or_null(per_counted_step(counted_seconds()));
  for (const int p : {50, 75, 90, 95}) j["p" + std::to_string(p) + "_s"] = Json::finite_or_null(percentile(p));
  Json seconds = Json::array();
  for (const double s : stats_->counted_seconds()) seconds.push_back(s);
  j["step_seconds"] = std::move(seconds);
  return j;
}

Json StepTimes::per_step_json() const {
  const double step = per_counted_step(counted_seconds());
  const double communication = per_counted_step(stats_->counted_communication_seconds());
  Json j = Json::object();
  j["step_s"] = Json::finite_or_null(step);
  j["communication_s"] = Json::finite_or_null(communication);
  j["compute_s"] = Json::finite_or_null(step - communication);
  return j;
}

}  // namespace ts::tasks
