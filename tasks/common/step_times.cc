#include "tasks/common/step_times.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ts::tasks {

void StepTimes::record(double seconds, int64_t samples) {
  if (seen_++ < warmup_steps_) return;
  seconds_.push_back(seconds);
  samples_ += samples;
}

double StepTimes::total_seconds() const { return std::accumulate(seconds_.begin(), seconds_.end(), 0.0); }

double StepTimes::percentile(double p) const {
  if (seconds_.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> sorted = seconds_;
  std::sort(sorted.begin(), sorted.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double StepTimes::samples_per_second() const {
  const double t = total_seconds();
  if (seconds_.empty() || t <= 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(samples_) / t;
}

Json StepTimes::to_json() const {
  const auto number_or_null = [](double v) { return std::isnan(v) ? Json() : Json(v); };
  Json j = Json::object();
  j["steps"] = steps();
  j["warmup_steps"] = warmup_steps_;
  j["samples"] = samples_;
  j["samples_per_s"] = number_or_null(samples_per_second());
  j["mean_s"] = seconds_.empty() ? Json() : Json(total_seconds() / steps());
  for (const int p : {50, 75, 90, 95}) j["p" + std::to_string(p) + "_s"] = number_or_null(percentile(p));
  return j;
}

void StepTimes::restore(std::vector<double> counted_seconds, int64_t counted_samples) {
  seconds_ = std::move(counted_seconds);
  samples_ = counted_samples;
  seen_ = 0;
}

}  // namespace ts::tasks
