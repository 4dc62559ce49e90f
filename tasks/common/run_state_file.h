// Run-state checkpoint files: a RunState in a frame with a magic, a format
// version, the payload length and its CRC-32C, written atomically. A
// truncated or corrupt file is an error naming the file, never a silent
// restart from scratch.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tasks/common/run_state.pb.h"

namespace ts::tasks {

absl::Status save_run_state(const std::string& path, const RunState& state);
absl::StatusOr<RunState> load_run_state(const std::string& path);

}  // namespace ts::tasks
