#include "tasks/common/scaling.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "tasks/common/config.h"

namespace ts::tasks {
namespace {

constexpr double kSecondsPerHour = 3600;

// report[section][key]; null where either is missing.
const Json* field(const Json& report, absl::string_view section, absl::string_view key) {
  const Json* s = report.find(section);
  return s == nullptr ? nullptr : s->find(key);
}

// The field when it is a finite number.
std::optional<double> number_at(const Json& report, absl::string_view section, absl::string_view key) {
  const Json* v = field(report, section, key);
  if (v == nullptr || (v->type() != Json::Type::kInt && v->type() != Json::Type::kDouble)) return std::nullopt;
  if (!std::isfinite(v->as_double())) return std::nullopt;
  return v->as_double();
}

// The field when it is a string, else "".
std::string string_at(const Json& report, absl::string_view section, absl::string_view key) {
  const Json* v = field(report, section, key);
  return v != nullptr && v->is_string() ? v->as_string() : "";
}

}  // namespace

absl::StatusOr<Baseline> load_baseline(const std::string& path, const TaskConfig& config) {
  const std::string& task = config.name();
  const auto error = [&](absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat("baseline_report ", path, ": ", problem));
  };
  absl::StatusOr<std::string> text = read_file(path);
  if (!text.ok()) return absl::Status(text.status().code(), absl::StrCat("baseline_report: ", text.status().message()));
  absl::StatusOr<Json> report = parse_json(*text);
  if (!report.ok()) return error(absl::StrCat("not JSON: ", report.status().message()));
  const Json* format = report->find("format");
  if (format == nullptr || !format->is_string() || !absl::StartsWith(format->as_string(), "trainstack.report.")) {
    return error("not a task report (its \"format\" is not \"trainstack.report.*\")");
  }
  const std::string its_task = string_at(*report, "config", "name");
  if (its_task != task) return error(absl::StrCat("a report of task '", its_task, "', not '", task, "'"));
  const std::optional<double> ranks = number_at(*report, "world", "size");
  if (ranks != 1) {
    return error(ranks ? absl::StrCat("a run of ", *ranks, " ranks, not one") : "no world size (world.size)");
  }
  // The same workload and goal, as both reports write their configs.
  const Json mine = config_to_json(config);
  for (const char* key : {"batch_size", "dtype", "target_metric", "target_value", "target_minimize"}) {
    const Json* its = field(*report, "config", key);
    if (its == nullptr || *its != *mine.find(key)) {
      return error(absl::StrCat("a run with config ", key, " ", its == nullptr ? "(none)" : its->dump(), ", this one ",
                                mine.find(key)->dump(), ": its ",
                                absl::StartsWith(key, "target") ? "time to target is to another target"
                                                                : "throughput is of another workload"));
    }
  }
  const std::optional<double> samples_per_s = number_at(*report, "throughput", "samples_per_s");
  if (!samples_per_s || *samples_per_s <= 0) {
    return error("no throughput (throughput.samples_per_s; did it time no step past its warm-up?)");
  }
  Baseline b;
  b.path = path;
  b.samples_per_s = *samples_per_s;
  b.seconds_to_target = number_at(*report, "time_to_target", "seconds");  // "not reached" is no number
  return b;
}

Json scaling_json(const Baseline& baseline, int world_size, double rank_samples_per_s) {
  const double samples_per_s = world_size * rank_samples_per_s;
  Json j = Json::object();
  j["baseline_report"] = baseline.path;
  j["baseline_world_size"] = 1;
  j["baseline_samples_per_s"] = baseline.samples_per_s;
  j["world_size"] = world_size;
  j["samples_per_s"] = Json::finite_or_null(samples_per_s);
  j["efficiency"] = Json::finite_or_null(samples_per_s / (world_size * baseline.samples_per_s));
  return j;
}

// As MLBench prices its benchmark tasks (mlbench.readthedocs.io, "Benchmark
// Tasks"; benchmark-tasks.rst in github.com/mlbench/mlbench-docs): a price
// per node and hour, the cost of training to the target on n nodes, and "the
// price index is computed as follows: index = price_increase /
// performance_increase", both against training on one node, performance
// being the speedup in time to accuracy. Below 1, the extra nodes are worth
// their price.
Json price_json(const RunCost& run, const std::optional<Baseline>& baseline) {
  const auto cost = [&](double seconds, int nodes) { return seconds / kSecondsPerHour * nodes * run.price_per_hour; };
  const double node_hours = run.elapsed_seconds / kSecondsPerHour * run.nodes;
  Json j = Json::object();
  j["price_per_hour"] = run.price_per_hour;
  j["nodes"] = run.nodes;
  j["node_hours"] = node_hours;
  j["cost_total"] = node_hours * run.price_per_hour;
  j["cost_to_target"] = run.seconds_to_target ? Json(cost(*run.seconds_to_target, run.nodes)) : Json();
  Json index;
  if (run.seconds_to_target && baseline && baseline->seconds_to_target) {
    const double price_increase = cost(*run.seconds_to_target, run.nodes) / cost(*baseline->seconds_to_target, 1);
    const double performance_increase = *baseline->seconds_to_target / *run.seconds_to_target;
    index = Json::finite_or_null(price_increase / performance_increase);
  }
  j["index"] = std::move(index);
  return j;
}

}  // namespace ts::tasks
