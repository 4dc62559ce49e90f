// The command-line flags every task binary has: --config (a text-proto file
// replacing the task's compiled-in default), typed flags for the common
// fields (--lr=0.4, --epochs=3, ...; --lr and friends set the chosen
// optimizer's field, --dataset the task's), --set for any field
// ("--set=momentum=0.9,lr_schedule=COSINE", may be repeated) and --resume.
// Typed flags apply first, then --set; both override the config. Typed flags
// apply only when given (--lr=0.4); a bool one (--resume, --synthetic) given
// false (--synthetic=false, --nosynthetic) turns its field off.
#pragma once

#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tasks/common/config.pb.h"

ABSL_DECLARE_FLAG(std::string, config);
ABSL_DECLARE_FLAG(std::string, set);

namespace ts::tasks {

// absl::ParseCommandLine, except that every --set on the command line
// counts, in order (absl keeps only the last value of a repeated flag).
void parse_task_command_line(int argc, char** argv);

// After parse_task_command_line: the config from --config (a text-proto file)
// or else `default_config` (the task's own, compiled into its binary, so it
// runs the same from any directory and on any machine; `task` names it in
// errors), then the typed flags given on the command line, then --set, then
// validation. Errors name the file and line, or the flag, field and value.
absl::StatusOr<TaskConfig> config_from_flags(absl::string_view default_config, absl::string_view task);

}  // namespace ts::tasks
