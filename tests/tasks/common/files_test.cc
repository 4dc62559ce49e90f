// Atomic replacement leaves the complete file and no temp file; errors name
// the path.
#include "tasks/common/files.h"

#include <dirent.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
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

TEST(FilesTest, ErrorsNameThePath) {
  const std::string missing = join_path(::testing::TempDir(), "no/such/file");
  expect_error(read_file(missing).status(), absl::StatusCode::kNotFound, {missing});
  expect_error(write_file_atomically(missing, "x"), absl::StatusCode::kNotFound, {missing});
  const std::string file = join_path(::testing::TempDir(), "plain");
  ASSERT_OK(write_file_atomically(file, "x"));
  expect_error(make_dirs(file), absl::StatusCode::kFailedPrecondition, {file, "not a directory"});
}

TEST(FilesTest, JoinPath) {
  EXPECT_EQ(join_path("a", "b"), "a/b");
  EXPECT_EQ(join_path("a/", "b"), "a/b");
  EXPECT_EQ(join_path("", "b"), "b");
}

}  // namespace
}  // namespace ts::tasks
