// Named wall-time accumulators ("communication", "data", ...) that any code
// feeds (DDP's wait time, the loader), for the report's compute vs
// communication breakdown. Thread safe: hooks may run on other threads.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "absl/strings/string_view.h"

namespace ts::tasks {

class TimeBuckets {
 public:
  void add(absl::string_view name, double seconds);
  double seconds(absl::string_view name) const;  // 0 for a bucket never fed
  std::map<std::string, double> totals() const;
  void restore(std::map<std::string, double> totals);

  // Adds the scope's wall time to a bucket.
  class Scope {
   public:
    Scope(TimeBuckets& buckets, std::string name)
        : buckets_(buckets), name_(std::move(name)), start_(std::chrono::steady_clock::now()) {}
    ~Scope() { buckets_.add(name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count()); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    TimeBuckets& buckets_;
    std::string name_;
    std::chrono::steady_clock::time_point start_;
  };

 private:
  mutable std::mutex mu_;
  std::map<std::string, double, std::less<>> totals_;
};

}  // namespace ts::tasks
