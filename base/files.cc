#include "base/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

// Where writing `path` lands: the end of its chain of symbolic links, as
// git's lockfile resolves it. Only the last component is read as a link (the
// kernel resolves the directories on the way), and a relative target is
// relative to the link's directory. A readlink error other than "not a link"
// ends the chain there: a missing file is created where the chain points (a
// dangling link, as open(O_CREAT) follows it), and any other problem is
// reported by the file operations that follow, naming that path.
absl::StatusOr<std::string> follow_links(const std::string& path) {
  constexpr int kMaxLinks = 40;  // Linux's MAXSYMLINKS
  std::string at = path;
  for (int i = 0; i < kMaxLinks; ++i) {
    std::string target(256, '\0');
    ssize_t n;
    while ((n = ::readlink(at.c_str(), target.data(), target.size())) == static_cast<ssize_t>(target.size())) {
      target.resize(2 * target.size());  // readlink truncates silently
    }
    if (n < 0) return at;
    target.resize(static_cast<size_t>(n));
    at = target[0] == '/' ? target : at.substr(0, at.rfind('/') + 1) + target;  // npos + 1: no directory
  }
  errno = ELOOP;
  return errno_error("cannot follow the symbolic links of", path);
}

// The path a system call failed on, with the link it was reached through.
std::string describe(const std::string& target, const std::string& path) {
  return target == path ? target : absl::StrCat(target, " (where the link ", path, " points)");
}

// The mode open(path, O_CREAT, 0666) gives a new file: 0666 & ~umask.
// umask() can only read the mask by setting it, and another thread creating
// a file in between would get the wrong mode; the Umask line of
// /proc/self/status (Linux 4.7 and later) reads it without a change. Without
// that line (an older kernel, no /proc mounted) there is no race-free way to
// learn it: 0644, what the usual umask 022 gives.
mode_t new_file_mode() {
  constexpr mode_t kFallback = 0644;
  const absl::StatusOr<std::string> status = read_file("/proc/self/status");
  if (!status.ok()) return kFallback;
  const size_t line = status->find("\nUmask:");
  if (line == std::string::npos) return kFallback;
  const char* digits = status->c_str() + line + 7;
  char* end = nullptr;
  const unsigned long mask = std::strtoul(digits, &end, 8);
  if (end == digits) return kFallback;
  return 0666 & ~static_cast<mode_t>(mask);
}

// Reads an open file to its end.
absl::StatusOr<std::string> read_fd(int fd, const std::string& path, size_t size_hint) {
  std::string out;
  out.reserve(size_hint);
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
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
  struct stat st;
  const size_t size_hint = ::fstat(fd, &st) == 0 && st.st_size > 0 ? static_cast<size_t>(st.st_size) : 0;
  absl::StatusOr<std::string> out = read_fd(fd, path, size_hint);
  ::close(fd);
  return out;
}

absl::StatusOr<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status status = errno_error("cannot stat", path);
    ::close(fd);
    return status;
  }
  // mmap refuses 0 bytes, and a size of 0 may also mean "unknown" (/proc);
  // neither is worth a mapping.
  if (!S_ISREG(st.st_mode) || st.st_size == 0) {
    absl::StatusOr<std::string> bytes = read_fd(fd, path, 0);
    ::close(fd);
    if (!bytes.ok()) return bytes.status();
    return MappedFile(*std::move(bytes));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  absl::Status status = map == MAP_FAILED ? errno_error("cannot map", path) : absl::OkStatus();
  ::close(fd);  // the mapping holds the file
  if (!status.ok()) return status;
  return MappedFile(map, size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : map_(other.map_), map_size_(other.map_size_), read_(std::move(other.read_)) {
  other.map_ = nullptr;
  other.map_size_ = 0;
}

MappedFile::~MappedFile() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
}

absl::StatusOr<AtomicFile> AtomicFile::create(const std::string& path) {
  // Replacing a symbolic link would cut it from the file it names; the file
  // at the end of the link is the one to replace.
  ASSIGN_OR_RETURN(std::string target, follow_links(path));
  // An existing file keeps its permission bits (as editors keep them); the
  // set-ID and sticky bits, meant for the old contents, are dropped.
  struct stat st;
  const mode_t mode = ::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? st.st_mode & 0777 : new_file_mode();
  // The temp file sits beside the target: rename is atomic only within one
  // file system. mkstemp keeps concurrent writers (ranks, threads) apart.
  std::string tmp = absl::StrCat(target, ".tmp.XXXXXX");
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);  // not inherited by a child process
  if (fd < 0) return errno_error("cannot create a temporary file for", describe(target, path));
  // mkostemp creates 0600. A failure (a file system without modes) keeps
  // that, the safe side, rather than failing the write.
  ::fchmod(fd, mode);
  return AtomicFile(path, std::move(target), std::move(tmp), fd);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      tmp_path_(std::move(other.tmp_path_)),
      fd_(other.fd_) {
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
  if (::rename(tmp_path_.c_str(), target_.c_str()) != 0) {
    return errno_error("cannot rename onto", describe(target_, path_));
  }
  tmp_path_.clear();
  // The rename itself is durable only once the directory entry is synced.
  const std::string dir = parent_dir(target_);
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
  // AtomicFile writes beside the file a link ends at.
  ASSIGN_OR_RETURN(const std::string target, follow_links(path));
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : target.substr(0, slash);
  const std::string prefix = absl::StrCat(slash == std::string::npos ? target : target.substr(slash + 1), ".tmp.");
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

std::string default_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return join_path(xdg, "trainstack");
  const char* home = std::getenv("HOME");
  return join_path(home != nullptr && *home != '\0' ? home : "/tmp", ".cache/trainstack");
}

std::string user_path(const std::string& path) {
  const char* user_dir = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path[0] == '/' || user_dir == nullptr || *user_dir == '\0') return path;
  return join_path(user_dir, path);
}

absl::Status check_can_write(const std::string& path) {
  const size_t slash = path.rfind('/');
  RETURN_IF_ERROR(make_dirs(slash == std::string::npos ? "" : slash == 0 ? "/" : path.substr(0, slash)));
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot write ", path, ": it is a directory"));
  }
  std::string probe = absl::StrCat(path, ".tmp.XXXXXX");  // as remove_atomic_leftovers knows it
  const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) return errno_error("cannot create a file beside", path);
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

}  // namespace ts
