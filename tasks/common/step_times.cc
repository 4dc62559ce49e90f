#include "tasks/common/step_times.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace ts::tasks {

void StepTimes::record(double seconds, int64_t samples) {
  stats_->set_total_seconds(stats_->total_seconds() + seconds);
  if (seen_++ < warmup_steps_) return;
  stats_->add_counted_seconds(seconds);
  stats_->set_counted_samples(stats_->counted_samples() + samples);
}

double StepTimes::counted_seconds() const {
  return std::accumulate(stats_->counted_seconds().begin(), stats_->counted_seconds().end(), 0.0);
}

double StepTimes::percentile(double p) const {
  if (steps() == 0) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> sorted(stats_->counted_seconds().begin(), stats_->counted_seconds().end());
  std::sort(sorted.begin(), sorted.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double StepTimes::samples_per_second() const {
  const double t = counted_seconds();
  if (steps() == 0 || t <= 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(samples()) / t;
}

Json StepTimes::to_json() const {
  const auto number_or_null = [](double v) { return std::isnan(v) ? Json() : Json(v); };
  Json j = Json::object();
  j["steps"] = steps();
  j["warmup_steps"] = warmup_steps_;
  j["samples"] = samples();
  j["samples_per_s"] = number_or_null(samples_per_second());
  j["mean_s"] = steps() == 0 ? Json() : Json(counted_seconds() / static_cast<double>(steps()));
  for (const int p : {50, 75, 90, 95}) j["p" + std::to_string(p) + "_s"] = number_or_null(percentile(p));
  return j;
}

}  // namespace ts::tasks
