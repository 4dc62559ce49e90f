// The JSON report of a task run: config, environment, world, per-epoch
// records, throughput with step-time percentiles, time to target, the time
// breakdown by bucket and per step, scaling efficiency against a baseline
// run, MLBench's price figures, per-step curves, and free-form sections a
// task adds (comm_bench's per-size table). tools/report diffs two of them.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/json.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "tasks/common/run_state.pb.h"

namespace ts::tasks {

class Report {
 public:
  Report();
  void set(absl::string_view section, Json value);  // config, environment, ...
  // The "epochs" section, from the run state's records.
  void set_epochs(const google::protobuf::RepeatedPtrField<EpochRecord>& epochs);
  // Free-form sections, created empty on first use; "extra" holds them.
  Json& extra(absl::string_view name);
  const Json& json() const { return root_; }
  // Atomic write of the pretty-printed JSON.
  absl::Status write(const std::string& path) const;

 private:
  Json root_;
};

}  // namespace ts::tasks
