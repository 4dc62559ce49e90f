#include "tasks/common/time_buckets.h"

namespace ts::tasks {

void TimeBuckets::add(absl::string_view name, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = totals_.find(name);
  if (it == totals_.end()) it = totals_.emplace(std::string(name), 0.0).first;
  it->second += seconds;
}

double TimeBuckets::seconds(absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = totals_.find(name);
  return it == totals_.end() ? 0.0 : it->second;
}

std::map<std::string, double> TimeBuckets::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {totals_.begin(), totals_.end()};
}

void TimeBuckets::restore(std::map<std::string, double> totals) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_ = {totals.begin(), totals.end()};
}

}  // namespace ts::tasks
