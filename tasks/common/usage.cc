#include "tasks/common/usage.h"

#include <mutex>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"

namespace ts::tasks {
namespace {

bool ours(absl::string_view file) { return absl::StartsWith(file, "tasks/") || absl::StartsWith(file, "collectives/"); }

}  // namespace

void set_usage(absl::string_view message) {
  // absl aborts on a second usage message; a test parses several command
  // lines in one process.
  static std::once_flag once;
  std::call_once(once, [message] {
    absl::SetProgramUsageMessage(message);
    absl::FlagsUsageConfig config;
    config.contains_helpshort_flags = ours;
    config.contains_help_flags = ours;
    absl::SetFlagsUsageConfig(config);
  });
}

}  // namespace ts::tasks
