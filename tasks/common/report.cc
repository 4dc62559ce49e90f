#include "tasks/common/report.h"

#include "tasks/common/files.h"

namespace ts::tasks {

Report::Report() {
  // Fixed key order, so reports read the same from run to run.
  root_ = Json::object();
  root_["format"] = "trainstack.report.v1";
  for (const char* key : {"config", "environment", "world", "epochs", "throughput", "time_to_target",
                          "time_breakdown", "extra"}) {
    root_[key] = Json();
  }
  root_["epochs"] = Json::array();
  root_["extra"] = Json::object();
}

void Report::set(absl::string_view section, Json value) { root_[section] = std::move(value); }

void Report::add_epoch(const EpochRecord& r) {
  Json e = Json::object();
  e["epoch"] = r.epoch;
  e["steps"] = r.steps;
  e["train_loss"] = r.train_loss;
  Json metrics = Json::object();
  for (const auto& [name, value] : r.metrics) metrics[name] = value;
  e["eval"] = std::move(metrics);
  e["lr"] = r.lr;
  e["epoch_seconds"] = r.epoch_seconds;
  e["wall_seconds"] = r.wall_seconds;
  root_["epochs"].push_back(std::move(e));
}

Json& Report::extra(absl::string_view name) { return root_["extra"][name]; }

absl::Status Report::restore_epochs(const Json& epochs) {
  if (!epochs.is_array()) return absl::InvalidArgumentError("report epochs: expected a JSON array");
  root_["epochs"] = epochs;
  return absl::OkStatus();
}

absl::Status Report::write(const std::string& path) const { return write_file_atomically(path, root_.dump(2) + "\n"); }

}  // namespace ts::tasks
