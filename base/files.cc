#include "base/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ts {
namespace {

std::string parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::Status errno_error(absl::string_view what, absl::string_view path) {
  const int e = errno;
  const std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(e));
  if (e == ENOENT) return absl::NotFoundError(message);
  if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

absl::StatusOr<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error("cannot open", path);
  std::string out;
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status status = errno_error("cannot read", path);
      ::close(fd);
      return status;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::StatusOr<AtomicFile> AtomicFile::create(const std::string& path) {
  // The temp file sits beside the target: rename is atomic only within one
  // file system. mkstemp keeps concurrent writers (ranks, threads) apart.
  std::string tmp = absl::StrCat(path, ".tmp.XXXXXX");
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);  // not inherited by a child process
  if (fd < 0) return errno_error("cannot create a temporary file for", path);
  ::fchmod(fd, 0644);
  return AtomicFile(path, std::move(tmp), fd);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)), tmp_path_(std::move(other.tmp_path_)), fd_(other.fd_) {
  other.fd_ = -1;
  other.tmp_path_.clear();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_path_.empty()) ::unlink(tmp_path_.c_str());
}

absl::Status AtomicFile::write(absl::string_view data) {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, ": write after commit"));
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("cannot write", tmp_path_);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::commit() {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, ": committed twice"));
  if (::fsync(fd_) != 0) return errno_error("cannot fsync", tmp_path_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return errno_error("cannot close", tmp_path_);
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) return errno_error("cannot rename onto", path_);
  tmp_path_.clear();
  // The rename itself is durable only once the directory entry is synced.
  const std::string dir = parent_dir(path_);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno_error("cannot open directory", dir);
  const bool synced = ::fsync(dfd) == 0;
  ::close(dfd);
  if (!synced) return errno_error("cannot fsync directory", dir);
  return absl::OkStatus();
}

absl::Status write_file_atomically(const std::string& path, absl::string_view contents) {
  ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::create(path));
  RETURN_IF_ERROR(file.write(contents));
  return file.commit();
}

absl::StatusOr<int> remove_atomic_leftovers(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string prefix = absl::StrCat(slash == std::string::npos ? path : path.substr(slash + 1), ".tmp.");
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return errno == ENOENT ? 0 : absl::StatusOr<int>(errno_error("cannot list", dir));
  std::vector<std::string> leftovers;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    // mkstemp's six characters after the prefix, and nothing else.
    if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0) leftovers.push_back(name);
  }
  ::closedir(d);
  for (const std::string& name : leftovers) {
    const std::string leftover = join_path(dir, name);
    if (::unlink(leftover.c_str()) != 0 && errno != ENOENT) return errno_error("cannot remove", leftover);
  }
  return static_cast<int>(leftovers.size());
}

absl::Status make_dirs(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    const std::string prefix = dir.substr(0, i);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return errno_error("cannot create directory", prefix);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return errno_error("cannot stat", dir);
  if (!S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(dir, " exists and is not a directory"));
  return absl::OkStatus();
}

std::string join_path(absl::string_view dir, absl::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

}  // namespace ts
