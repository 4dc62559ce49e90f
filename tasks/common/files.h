// File helpers for reports, checkpoints and event files: whole-file reads,
// atomic replacement (temp file + fsync + rename) and mkdir -p. Errors name
// the path and the system's reason.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts::tasks {

// Replaces `path` with `contents` so that a reader (or a crash) sees either
// the old file or the complete new one, never a partial write.
absl::Status write_file_atomically(const std::string& path, absl::string_view contents);

absl::StatusOr<std::string> read_file(const std::string& path);

// Creates `dir` and its missing parents; OK if it exists.
absl::Status make_dirs(const std::string& dir);

// "a/b" + "c" -> "a/b/c"; an empty dir gives the name alone.
std::string join_path(absl::string_view dir, absl::string_view name);

}  // namespace ts::tasks
