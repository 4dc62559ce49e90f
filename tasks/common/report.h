// The JSON report of a task run: config, environment, world, per-epoch
// records, throughput with step-time percentiles, time to target, the time
// breakdown by bucket, and free-form sections a task adds (comm_bench's
// per-size table). tools/report diffs two of them.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "tasks/common/json.h"

namespace ts::tasks {

struct EpochRecord {
  int epoch = 0;  // 1-based
  int64_t steps = 0;
  double train_loss = 0;  // sample-weighted mean over the epoch's steps
  std::map<std::string, double> metrics;  // empty when not evaluated
  double lr = 0;
  double epoch_seconds = 0;  // wall time of this epoch
  double wall_seconds = 0;   // run time at its end, all sessions
};

class Report {
 public:
  Report();

  void set(absl::string_view section, Json value);  // config, environment, ...
  void add_epoch(const EpochRecord& record);
  // Free-form sections, created empty on first use; "extra" holds them.
  Json& extra(absl::string_view name);

  const Json& json() const { return root_; }
  // Replaces the epochs (a resumed run continues the saved list).
  absl::Status restore_epochs(const Json& epochs);

  // Atomic write of the pretty-printed JSON.
  absl::Status write(const std::string& path) const;

 private:
  Json root_;
};

}  // namespace ts::tasks
