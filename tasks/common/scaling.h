// A run's figures against a one-rank baseline run of the same task (scaling
// efficiency) and in money (MLBench's price figures): the report's "scaling"
// and "price" sections.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json.h"
#include "tasks/common/config.pb.h"

namespace ts::tasks {

struct Baseline {
  std::string path;
  double samples_per_s = 0;
  std::optional<double> seconds_to_target;  // when it reached the target
};

// The report.json at `path` as the baseline of a run of `config`. Errors
// name the file and what is wrong with it: unreadable, not JSON, not a task
// report, a report of another task or of more than one rank, one without
// throughput, or one of another workload: a batch size or dtype other than
// the run's (its efficiency would measure the workload, not the scaling) or
// another target (its price index would divide times to two targets).
absl::StatusOr<Baseline> load_baseline(const std::string& path, const TaskConfig& config);

// {"baseline_report", "baseline_world_size": 1, "baseline_samples_per_s",
//  "world_size", "samples_per_s", "efficiency"}. The run's samples_per_s is
// world_size times a rank's (the report's "throughput"): under DDP every rank
// trains a batch of the same size in lock step. efficiency = samples_per_s /
// (world_size * baseline_samples_per_s); null values where the run timed no
// step.
Json scaling_json(const Baseline& baseline, int world_size, double rank_samples_per_s);

struct RunCost {
  double price_per_hour = 0;  // of one node
  int nodes = 1;
  double elapsed_seconds = 0;
  std::optional<double> seconds_to_target;  // when the run reached the target
};

// {"price_per_hour", "nodes", "node_hours", "cost_total", "cost_to_target",
//  "index"}: node_hours = elapsed hours * nodes, cost_total = node_hours *
// price_per_hour, cost_to_target = hours to the target * nodes *
// price_per_hour, and MLBench's price index against the one-node baseline.
// cost_to_target is null when the run missed the target; index also without
// a baseline or when the baseline missed it.
Json price_json(const RunCost& run, const std::optional<Baseline>& baseline);

}  // namespace ts::tasks
