// Loading a TaskConfig from a text proto file and overriding its fields by
// name ("lr=0.4", "[ts.tasks.resnet].depth=56" style paths).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json.h"
#include "tasks/common/config.pb.h"

namespace ts::tasks {

// Parses `path` as a text-format TaskConfig (extensions of the task linked
// into the binary included). Errors name the file, line and column.
absl::StatusOr<TaskConfig> load_config(const std::string& path);
// The same from text already in memory; `name` stands for the file in errors.
absl::StatusOr<TaskConfig> parse_config(absl::string_view text, absl::string_view name);

// Sets one field from text. `path` is a field name, or a dotted path through
// message fields; an extension is named by its full or short name (e.g.
// "resnet20.dataset"). A name TaskConfig does not have is looked up in the
// chosen optimizer's message and the task's extension messages: "lr" is
// "sgd.lr", "dataset" the task's dataset field. Values use text-format
// syntax, except that strings need no quotes. Repeated fields take a
// bracketed list: "lr_milestones=[82, 123]". Errors name the field and the
// value.
absl::Status set_config_field(TaskConfig& config, absl::string_view path, absl::string_view value);

// Applies "field=value,field=value" (the --set flag). Commas inside quotes or
// brackets do not split.
absl::Status apply_overrides(TaskConfig& config, absl::string_view assignments);

// The per-worker learning rate of the chosen optimizer (SGD's default when
// the config chooses none).
double configured_lr(const TaskConfig& config);

// Consistency of the common fields (positive epochs and batch size, ...).
absl::Status validate_config(const TaskConfig& config);

// Every field, defaults included, with proto field names (for the report).
Json config_to_json(const TaskConfig& config);

}  // namespace ts::tasks
