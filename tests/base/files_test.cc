// Atomic replacement, whole or streamed, leaves the complete file and no temp
// file; it writes through a symbolic link, gives a new file the mode open()
// would (an existing one keeps its own), and its temp file is close-on-exec;
// an abandoned streamed write leaves the old file; a mapped file reads as its
// bytes; errors name the path.
#include "base/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using ::ts::testing::expect_error;

// A fresh directory under the test's temp dir.
std::string fresh_dir(const std::string& name) {
  const std::string dir = join_path(::testing::TempDir(), name);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(make_dirs(dir).ok());
  return dir;
}

mode_t mode_of(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Sets the process umask for a scope.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  return names;
}

// What is checked at a run's start of a file written at its end.
TEST(FilesTest, CheckCanWriteCreatesParentsAndNamesWhatStopsAWrite) {
  const std::string dir = join_path(::testing::TempDir(), "can_write");
  const std::string path = join_path(join_path(dir, "a/b"), "report.json");
  ASSERT_OK(check_can_write(path));
  struct stat st;
  EXPECT_EQ(::stat(join_path(dir, "a/b").c_str(), &st), 0) << "the parents are made";
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(join_path(dir, "a/b"))) left.push_back(entry.path());
  EXPECT_TRUE(left.empty()) << "the probe stayed: " << left[0];
  expect_error(check_can_write(join_path(dir, "a")), absl::StatusCode::kFailedPrecondition,
               {"cannot write", "/a: it is a directory"});
  // No file can be made in /proc/self, root or not.
  const absl::Status proc = check_can_write("/proc/self/report.json");
  EXPECT_FALSE(proc.ok());
  EXPECT_NE(std::string(proc.message()).find("/proc/self/report.json"), std::string::npos) << proc;
}

// Under `bazel run` a relative path the user gave is the user's
// directory's; an absolute one, or any outside `bazel run`, stays.
TEST(FilesTest, UserPathsAreTakenFromBazelRunsWorkingDirectory) {
  unsetenv("BUILD_WORKING_DIRECTORY");
  EXPECT_EQ(user_path("out/report.json"), "out/report.json");
  setenv("BUILD_WORKING_DIRECTORY", "/home/me", 1);
  EXPECT_EQ(user_path("out/report.json"), "/home/me/out/report.json");
  EXPECT_EQ(user_path("/tmp/report.json"), "/tmp/report.json");
  EXPECT_EQ(user_path(""), "");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

// The cache the tasks build their default data in follows the XDG rule.
TEST(FilesTest, DefaultCacheDirIsXdgCacheHomesOrHomes) {
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_home = home != nullptr ? home : "", saved_xdg = xdg != nullptr ? xdg : "";
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/me", 1);
  EXPECT_EQ(default_cache_dir(), "/xdg/trainstack");
  setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(default_cache_dir(), "/home/me/.cache/trainstack");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(default_cache_dir(), "/tmp/.cache/trainstack");
  if (home != nullptr) setenv("HOME", saved_home.c_str(), 1);
  if (xdg != nullptr) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
}

TEST(FilesTest, AtomicWriteReplacesAndLeavesNoTempFile) {
  const std::string dir = join_path(::testing::TempDir(), "files_test/a/b");
  ASSERT_OK(make_dirs(dir));
  ASSERT_OK(make_dirs(dir));  // existing is fine
  const std::string path = join_path(dir, "f.json");
  ASSERT_OK(write_file_atomically(path, "first"));
  ASSERT_OK(write_file_atomically(path, std::string(100000, 'x')));
  ASSERT_OK_AND_ASSIGN(std::string back, read_file(path));
  EXPECT_EQ(back, std::string(100000, 'x'));
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"f.json"});
}

TEST(FilesTest, StreamedWriteAppearsOnlyAtCommit) {
  const std::string dir = join_path(::testing::TempDir(), "files_test_streamed");
  ASSERT_OK(make_dirs(dir));
  const std::string path = join_path(dir, "f.bin");
  ASSERT_OK(write_file_atomically(path, "old"));
  {
    ASSERT_OK_AND_ASSIGN(AtomicFile file, AtomicFile::create(path));
    ASSERT_OK(file.write("new "));
    ASSERT_OK(file.write(std::string(70000, 'y')));  // larger than read_file's 64 KiB buffer
    ASSERT_OK_AND_ASSIGN(std::string before, read_file(path));
    EXPECT_EQ(before, "old");
    ASSERT_OK(file.commit());
    expect_error(file.write("z"), absl::StatusCode::kFailedPrecondition, {path, "write after commit"});
    expect_error(file.commit(), absl::StatusCode::kFailedPrecondition, {path, "committed twice"});
  }
  ASSERT_OK_AND_ASSIGN(std::string back, read_file(path));
  EXPECT_EQ(back, "new " + std::string(70000, 'y'));
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"f.bin"});
}

TEST(FilesTest, AbandonedStreamedWriteLeavesTheOldFile) {
  const std::string dir = join_path(::testing::TempDir(), "files_test_abandoned");
  ASSERT_OK(make_dirs(dir));
  const std::string path = join_path(dir, "f.bin");
  ASSERT_OK(write_file_atomically(path, "old"));
  {
    ASSERT_OK_AND_ASSIGN(AtomicFile file, AtomicFile::create(path));
    ASSERT_OK(file.write("half of the new"));
    // After a move only the moved-to object owns (and removes) the temp file.
    AtomicFile moved(std::move(file));
  }
  ASSERT_OK_AND_ASSIGN(std::string back, read_file(path));
  EXPECT_EQ(back, "old");
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"f.bin"});
}

// A process killed between an AtomicFile's create and commit leaves its
// temporary file; the next run's cleanup removes those of that path only.
TEST(FilesTest, LeftoversOfKilledWritesAreRemoved) {
  const std::string dir = join_path(::testing::TempDir(), "files_test_leftovers");
  ASSERT_OK(make_dirs(dir));
  const std::string path = join_path(dir, "run_state.ckpt");
  ASSERT_OK(write_file_atomically(path, "saved"));
  for (const char* name : {"run_state.ckpt.tmp.a1B2c3", "run_state.ckpt.tmp.Zz9yY8", "run_state.ckpt.tmp.toolong1",
                           "other.ckpt.tmp.a1B2c3", "run_state.ckpt.old"}) {
    ASSERT_OK(write_file_atomically(join_path(dir, name), "partial"));
  }
  ASSERT_OK_AND_ASSIGN(const int removed, remove_atomic_leftovers(path));
  EXPECT_EQ(removed, 2);
  std::vector<std::string> left = list_dir(dir);
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"other.ckpt.tmp.a1B2c3", "run_state.ckpt", "run_state.ckpt.old",
                                            "run_state.ckpt.tmp.toolong1"}));
  EXPECT_EQ(*remove_atomic_leftovers(join_path(::testing::TempDir(), "no_such_dir/x")), 0);
}

// As git's lockfile does: the link stays a link and its target gets the new
// content, with the temp file beside the target (the rename's file system).
TEST(FilesTest, AtomicWriteFollowsASymbolicLink) {
  const std::string base = fresh_dir("files_test_symlink");
  const std::string real_dir = join_path(base, "real");
  const std::string link_dir = join_path(base, "links");
  ASSERT_OK(make_dirs(real_dir));
  ASSERT_OK(make_dirs(link_dir));
  const std::string target = join_path(real_dir, "f.json");
  ASSERT_OK(write_file_atomically(target, "old"));
  const std::string link = join_path(link_dir, "f.json");
  ASSERT_EQ(::symlink("../real/f.json", link.c_str()), 0);  // relative to the link's directory
  // A chain of links is followed to its end.
  const std::string link2 = join_path(link_dir, "g.json");
  ASSERT_EQ(::symlink(link.c_str(), link2.c_str()), 0);

  ASSERT_OK(write_file_atomically(link, "new"));
  ASSERT_OK_AND_ASSIGN(AtomicFile streamed, AtomicFile::create(link2));
  ASSERT_OK(streamed.write("newer"));
  ASSERT_OK(streamed.commit());

  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(::lstat(link2.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_OK_AND_ASSIGN(std::string back, read_file(target));
  EXPECT_EQ(back, "newer");
  EXPECT_EQ(list_dir(real_dir), std::vector<std::string>{"f.json"});
  std::vector<std::string> links = list_dir(link_dir);
  std::sort(links.begin(), links.end());
  EXPECT_EQ(links, (std::vector<std::string>{"f.json", "g.json"}));
  // The leftovers of a write through the link are beside the target too.
  ASSERT_OK(write_file_atomically(join_path(real_dir, "f.json.tmp.a1B2c3"), "partial"));
  EXPECT_EQ(*remove_atomic_leftovers(link), 1);
  EXPECT_EQ(list_dir(real_dir), std::vector<std::string>{"f.json"});
}

// A dangling link is written where it points, as open(O_CREAT) would.
TEST(FilesTest, AtomicWriteThroughADanglingLinkCreatesItsTarget) {
  const std::string base = fresh_dir("files_test_dangling");
  const std::string real_dir = join_path(base, "real");
  ASSERT_OK(make_dirs(real_dir));
  const std::string link = join_path(base, "link");
  ASSERT_EQ(::symlink("real/new.json", link.c_str()), 0);
  ASSERT_OK(write_file_atomically(link, "created"));
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_OK_AND_ASSIGN(std::string back, read_file(join_path(real_dir, "new.json")));
  EXPECT_EQ(back, "created");
  EXPECT_EQ(list_dir(real_dir), std::vector<std::string>{"new.json"});
  // A link into a missing directory fails naming the link's target.
  const std::string nowhere = join_path(base, "nowhere");
  ASSERT_EQ(::symlink("missing/x.json", nowhere.c_str()), 0);
  expect_error(write_file_atomically(nowhere, "x"), absl::StatusCode::kNotFound, {"missing/x.json"});
  // A loop is an error, not a hang.
  const std::string loop = join_path(base, "loop");
  ASSERT_EQ(::symlink("loop", loop.c_str()), 0);
  expect_error(write_file_atomically(loop, "x"), absl::StatusCode::kInternal, {loop});
}

// A new file gets 0666 & ~umask, as open(path, O_CREAT, 0666) gives; a
// replaced file keeps its own permission bits.
TEST(FilesTest, AtomicWriteModeFollowsUmaskOrTheReplacedFile) {
  const std::string dir = fresh_dir("files_test_mode");
  const std::string path = join_path(dir, "f.txt");
  {
    const ScopedUmask mask(027);
    ASSERT_OK(write_file_atomically(path, "new"));
    EXPECT_EQ(mode_of(path), 0640u);
    ASSERT_EQ(::chmod(path.c_str(), 0604), 0);
    ASSERT_OK(write_file_atomically(path, "replaced"));
    EXPECT_EQ(mode_of(path), 0604u);
    ASSERT_EQ(::chmod(path.c_str(), 0755), 0);
    ASSERT_OK_AND_ASSIGN(AtomicFile streamed, AtomicFile::create(path));
    ASSERT_OK(streamed.write("streamed"));
    ASSERT_OK(streamed.commit());
    EXPECT_EQ(mode_of(path), 0755u);
  }
  {
    const ScopedUmask mask(0);
    const std::string open_to_all = join_path(dir, "g.txt");
    ASSERT_OK(write_file_atomically(open_to_all, "new"));
    EXPECT_EQ(mode_of(open_to_all), 0666u);
  }
}

// The temp file is not inherited by a child process (mkostemp's O_CLOEXEC).
TEST(FilesTest, TempFileIsCloseOnExec) {
  const std::string dir = fresh_dir("files_test_cloexec");
  const std::string path = join_path(dir, "f.bin");
  ASSERT_OK_AND_ASSIGN(AtomicFile file, AtomicFile::create(path));
  ASSERT_OK(file.write("pending"));
  // /proc/self/fd/N links to the absolute path: compare within the real directory.
  char* real = ::realpath(dir.c_str(), nullptr);
  ASSERT_NE(real, nullptr);
  const std::string prefix = join_path(real, "f.bin.tmp.");
  std::free(real);
  int found = 0;
  for (const std::string& name : list_dir("/proc/self/fd")) {
    char target[4096];
    const ssize_t n = ::readlink(join_path("/proc/self/fd", name).c_str(), target, sizeof target);
    if (n <= 0 || std::string(target, n).rfind(prefix, 0) != 0) continue;
    ++found;
    const int flags = ::fcntl(std::stoi(name), F_GETFD);
    ASSERT_GE(flags, 0);
    EXPECT_TRUE(flags & FD_CLOEXEC) << std::string(target, n);
  }
  EXPECT_EQ(found, 1);
  ASSERT_OK(file.commit());
}

// The bytes of a file, mapped; an empty file is an empty view, a missing one
// an error naming it.
TEST(FilesTest, MappedFileReadsTheBytes) {
  const std::string dir = fresh_dir("files_test_mapped");
  const std::string path = join_path(dir, "f.bin");
  const std::string bytes = std::string(100000, 'x') + std::string("\0\1\2", 3);
  ASSERT_OK(write_file_atomically(path, bytes));
  {
    ASSERT_OK_AND_ASSIGN(MappedFile mapped, MappedFile::open(path));
    EXPECT_EQ(mapped.size(), bytes.size());
    EXPECT_TRUE(mapped.view() == bytes);
    // A move hands the mapping over.
    MappedFile moved(std::move(mapped));
    EXPECT_TRUE(moved.view() == bytes);
  }
  const std::string empty = join_path(dir, "empty");
  ASSERT_OK(write_file_atomically(empty, ""));
  ASSERT_OK_AND_ASSIGN(MappedFile mapped_empty, MappedFile::open(empty));
  EXPECT_EQ(mapped_empty.size(), 0u);
  EXPECT_NE(mapped_empty.data(), nullptr);  // memcmp and friends take it
  // A file with no size to map (/proc's) is read instead.
  ASSERT_OK_AND_ASSIGN(MappedFile status, MappedFile::open("/proc/self/status"));
  EXPECT_NE(status.view().find("Umask:"), absl::string_view::npos);
  const std::string missing = join_path(dir, "missing");
  expect_error(MappedFile::open(missing).status(), absl::StatusCode::kNotFound, {missing});
  expect_error(MappedFile::open(dir).status(), absl::StatusCode::kInternal, {dir});
}

TEST(FilesTest, ErrorsNameThePath) {
  const std::string missing = join_path(::testing::TempDir(), "no/such/file");
  expect_error(read_file(missing).status(), absl::StatusCode::kNotFound, {missing});
  expect_error(write_file_atomically(missing, "x"), absl::StatusCode::kNotFound, {missing});
  expect_error(AtomicFile::create(missing).status(), absl::StatusCode::kNotFound, {missing});
  const std::string file = join_path(::testing::TempDir(), "plain");
  ASSERT_OK(write_file_atomically(file, "x"));
  expect_error(make_dirs(file), absl::StatusCode::kFailedPrecondition, {file, "not a directory"});
}

TEST(FilesTest, ErrnoErrorCodes) {
  errno = ENOENT;
  expect_error(errno_error("cannot open", "/a/b"), absl::StatusCode::kNotFound,
               {"cannot open /a/b: No such file or directory"});
  errno = EACCES;
  expect_error(errno_error("cannot open", "/a/b"), absl::StatusCode::kPermissionDenied, {"/a/b"});
  errno = EPERM;
  expect_error(errno_error("cannot open", "/a/b"), absl::StatusCode::kPermissionDenied, {"/a/b"});
  errno = ENOSPC;
  expect_error(errno_error("cannot write", "/a/b"), absl::StatusCode::kInternal, {"cannot write /a/b"});
}

TEST(FilesTest, JoinPath) {
  EXPECT_EQ(join_path("a", "b"), "a/b");
  EXPECT_EQ(join_path("a/", "b"), "a/b");
  EXPECT_EQ(join_path("", "b"), "b");
}

}  // namespace
}  // namespace ts
