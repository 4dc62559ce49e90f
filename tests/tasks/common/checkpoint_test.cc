// The checkpoint schedule, and run-state files: a round trip, and clear
// errors naming the file for a missing, truncated, corrupt or foreign one.
#include <cstdlib>

#include "base/files.h"
#include "gtest/gtest.h"
#include "tasks/common/checkpoint_schedule.h"
#include "tasks/common/run_state_file.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

TEST(CheckpointScheduleTest, EveryIntervalFromTheLastSave) {
  CheckpointSchedule s(2, 100);  // 2 minutes
  EXPECT_FALSE(s.due(219));
  EXPECT_TRUE(s.due(220));
  s.saved(230);  // e.g. an epoch-end checkpoint
  EXPECT_FALSE(s.due(340));
  EXPECT_TRUE(s.due(350));
  CheckpointSchedule off(0, 0);
  EXPECT_FALSE(off.due(1e9));
}

RunState sample_state() {
  RunState s;
  s.set_epoch(3);
  s.set_step_in_epoch(17);
  s.set_global_step(1234);
  s.set_elapsed_seconds(456.5);
  s.mutable_generator()->set_offset(99);
  s.mutable_steps()->add_counted_seconds(0.25);
  (*s.mutable_blobs())["model"] = std::string("\0\1\2weights", 10);
  return s;
}

TEST(RunStateFileTest, RoundTrip) {
  const std::string path = join_path(::testing::TempDir(), "rt.ckpt");
  ASSERT_OK(save_run_state(path, sample_state()));
  ASSERT_OK_AND_ASSIGN(RunState back, load_run_state(path));
  EXPECT_EQ(back.SerializeAsString(), sample_state().SerializeAsString());
}

TEST(RunStateFileTest, DamagedFilesAreNamedErrors) {
  const std::string path = join_path(::testing::TempDir(), "damaged.ckpt");
  ASSERT_OK(save_run_state(path, sample_state()));
  ASSERT_OK_AND_ASSIGN(std::string good, read_file(path));

  ASSERT_OK(write_file_atomically(path, good.substr(0, good.size() - 3)));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "truncated"});
  ASSERT_OK(write_file_atomically(path, good.substr(0, 10)));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "truncated header"});

  std::string corrupt = good;
  corrupt[corrupt.size() - 4] ^= 0x40;
  ASSERT_OK(write_file_atomically(path, corrupt));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "checksum mismatch"});

  ASSERT_OK(write_file_atomically(path, "{\"this is\": \"a report, not a checkpoint\"}"));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "bad magic"});

  std::string future = good;
  future[8] = 7;  // format version 7
  ASSERT_OK(write_file_atomically(path, future));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "version 7"});

  const std::string missing = join_path(::testing::TempDir(), "none.ckpt");
  expect_error(load_run_state(missing).status(), absl::StatusCode::kNotFound, {missing});
}

}  // namespace
}  // namespace ts::tasks
