// Run-state checkpoint files: a RunState and the task's state blobs, in a
// frame with a magic, a format version, and each section's length and
// CRC-32C, written atomically. Each blob is a section of its own, outside the
// RunState message, so a model's state may pass protobuf's 2 GiB limit on one
// message. A truncated or corrupt file is an error naming the file, never a
// silent restart from scratch.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/files.h"
#include "tasks/common/run_state.pb.h"

namespace ts::tasks {

// The task's state by name (model, optimizer, lr and recipe state dicts,
// encoded by nn/checkpoint.h); the trainer writes and reads them, nothing
// else looks inside.
using StateBlobs = std::map<std::string, std::string>;

// A loaded file: the run state, and each blob as a view into the file's
// read-only mapping, which the checkpoint holds (so that decoding the blobs
// into tensors needs no private copy of them: every rank loads the file).
struct RunCheckpoint {
  RunState state;
  std::map<std::string, absl::string_view> blobs;
  std::shared_ptr<const MappedFile> file;
};

absl::Status save_run_state(const std::string& path, const RunState& state, const StateBlobs& blobs);
absl::StatusOr<RunCheckpoint> load_run_state(const std::string& path);

}  // namespace ts::tasks
