// Files for reports, checkpoints, configs and data: whole-file reads, atomic
// replacement (temp file + fsync + rename + directory fsync) whole or
// streamed, and mkdir -p. Errors name the path and the system's reason.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts {

absl::StatusOr<std::string> read_file(const std::string& path);

// Replaces `path` with `contents` so that a reader (or a crash) sees either
// the old file or the complete new one, never a partial write.
absl::Status write_file_atomically(const std::string& path, absl::string_view contents);

// The streamed form, for files too large to build in memory first: write()
// pieces to a temporary file beside `path`, then commit() puts it in place.
// Destroyed without a commit (after an error), it removes the temporary file
// and leaves `path` as it was.
class AtomicFile {
 public:
  static absl::StatusOr<AtomicFile> create(const std::string& path);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();

  absl::Status write(absl::string_view data);
  // fsync, rename over the target, fsync of the directory.
  absl::Status commit();

 private:
  AtomicFile(std::string path, std::string tmp_path, int fd)
      : path_(std::move(path)), tmp_path_(std::move(tmp_path)), fd_(fd) {}
  std::string path_;
  std::string tmp_path_;
  int fd_;
};

// Removes the temporary files that AtomicFiles for `path` left when their
// process was killed mid-write (`path`.tmp.XXXXXX, each as large as the file
// it was to become); returns how many. Call it where no other process writes
// `path`. A missing directory has none.
absl::StatusOr<int> remove_atomic_leftovers(const std::string& path);

// Creates `dir` and its missing parents; OK if it exists.
absl::Status make_dirs(const std::string& dir);

// "a/b" + "c" -> "a/b/c"; an empty dir gives the name alone.
std::string join_path(absl::string_view dir, absl::string_view name);

// The failed system call's errno as a Status: "<what> <path>: <reason>",
// kNotFound for ENOENT, kPermissionDenied for EACCES/EPERM, else kInternal.
absl::Status errno_error(absl::string_view what, absl::string_view path);

}  // namespace ts
