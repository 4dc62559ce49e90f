// Files for reports, checkpoints, configs and data: whole-file reads,
// read-only mappings, atomic replacement (temp file + fsync + rename +
// directory fsync) whole or streamed, and mkdir -p. Errors name the path and
// the system's reason.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts {

absl::StatusOr<std::string> read_file(const std::string& path);

// A file's bytes mapped read-only (mmap MAP_PRIVATE, PROT_READ) instead of
// read: the pages are the page cache's, shared and reclaimable, so decoding a
// large file (a checkpoint every rank loads) needs no private copy of it. The
// file must not shrink while mapped (a page past its new end raises SIGBUS);
// the files AtomicFile writes are replaced by a rename, never truncated, so a
// mapping keeps the old contents. An empty file, or one whose size says
// nothing (/proc's, a pipe), is read into memory instead.
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();

  // Never null, also for an empty file.
  const char* data() const { return map_ != nullptr ? static_cast<const char*>(map_) : read_.data(); }
  size_t size() const { return map_ != nullptr ? map_size_ : read_.size(); }
  absl::string_view view() const { return absl::string_view(data(), size()); }

 private:
  MappedFile(void* map, size_t map_size) : map_(map), map_size_(map_size) {}
  explicit MappedFile(std::string read) : read_(std::move(read)) {}
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::string read_;
};

// Replaces `path` with `contents` so that a reader (or a crash) sees either
// the old file or the complete new one, never a partial write. A symbolic
// link is followed, as git's lockfile does: the file it ends at (existing or
// not, as open(O_CREAT) would) is replaced and the link stays. The new file
// keeps the replaced file's permission bits; a new one gets 0666 & ~umask,
// as open(path, O_CREAT, 0666) gives.
absl::Status write_file_atomically(const std::string& path, absl::string_view contents);

// The streamed form, for files too large to build in memory first: write()
// pieces to a temporary file (close-on-exec) beside the file `path` names,
// then commit() puts it in place. Destroyed without a commit (after an
// error), it removes the temporary file and leaves `path` as it was.
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
  AtomicFile(std::string path, std::string target, std::string tmp_path, int fd)
      : path_(std::move(path)), target_(std::move(target)), tmp_path_(std::move(tmp_path)), fd_(fd) {}
  std::string path_;    // as given
  std::string target_;  // where path_'s links end: the file replaced
  std::string tmp_path_;
  int fd_;
};

// Removes the temporary files that AtomicFiles for `path` left when their
// process was killed mid-write (`path`.tmp.XXXXXX, each as large as the file
// it was to become; beside the file a link at `path` ends at); returns how
// many. Call it where no other process writes `path`. A missing directory has
// none.
absl::StatusOr<int> remove_atomic_leftovers(const std::string& path);

// Creates `dir` and its missing parents; OK if it exists.
absl::Status make_dirs(const std::string& dir);

// Whether write_file_atomically(path, ...) could write `path` now: creates
// its missing parent directories, and fails, naming the path and the
// reason, if it is a directory or no file can be created beside it (a
// read-only file system, permissions). Leaves no file behind. For outputs
// written at the end of a long run, checked at its start.
absl::Status check_can_write(const std::string& path);

// "a/b" + "c" -> "a/b/c"; an empty dir gives the name alone.
std::string join_path(absl::string_view dir, absl::string_view name);

// A path the user gave on the command line, as the process can open it:
// under `bazel run` the process runs in the binary's runfiles tree and
// BUILD_WORKING_DIRECTORY is the user's directory, which a relative path
// is taken from; otherwise the path as it is.
std::string user_path(const std::string& path);

// Where the tasks build their default data once for every run of the
// machine's user: $XDG_CACHE_HOME/trainstack, else ~/.cache/trainstack
// (/tmp/.cache/trainstack without a HOME).
std::string default_cache_dir();

// The failed system call's errno as a Status: "<what> <path>: <reason>",
// kNotFound for ENOENT, kPermissionDenied for EACCES/EPERM, else kInternal.
absl::Status errno_error(absl::string_view what, absl::string_view path);

}  // namespace ts
