// Atomic replacement, whole or streamed, leaves the complete file and no temp
// file; an abandoned streamed write leaves the old file; errors name the path.
#include "base/files.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using ::ts::testing::expect_error;

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
