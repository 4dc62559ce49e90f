// The checkpoint schedule, and run-state files: a round trip, and clear
// errors naming the file for a missing, truncated, corrupt or foreign one.
#include <cstdio>
#include <cstdlib>
#include <string>

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
  return s;
}

const StateBlobs& sample_blobs() {
  static const StateBlobs blobs = {{"model", std::string("\0\1\2weights", 10)}, {"lr", ""}};
  return blobs;
}

TEST(RunStateFileTest, RoundTrip) {
  const std::string path = join_path(::testing::TempDir(), "rt.ckpt");
  ASSERT_OK(save_run_state(path, sample_state(), sample_blobs()));
  ASSERT_OK_AND_ASSIGN(RunCheckpoint back, load_run_state(path));
  EXPECT_EQ(back.state.SerializeAsString(), sample_state().SerializeAsString());
  EXPECT_EQ(StateBlobs(back.blobs.begin(), back.blobs.end()), sample_blobs());
  // Views into the file's mapping, not copies of it.
  for (const auto& [name, bytes] : back.blobs) {
    EXPECT_GE(bytes.data(), back.file->data()) << name;
    EXPECT_LE(bytes.data() + bytes.size(), back.file->data() + back.file->size()) << name;
  }
}

// A blob is a section of the file, not a field of one protobuf message,
// which protobuf cannot serialize past 2 GiB: a blob just past it round-trips.
TEST(RunStateFileTest, BlobsPastTwoGibibytes) {
  const std::string path = join_path(::testing::TempDir(), "large.ckpt");
  constexpr size_t kBytes = (size_t{1} << 31) + 16;
  StateBlobs blobs = {{"model", std::string(kBytes, '\x7f')}};
  blobs["model"].back() = 'e';
  ASSERT_OK(save_run_state(path, sample_state(), blobs));
  blobs.clear();
  ASSERT_OK_AND_ASSIGN(RunCheckpoint back, load_run_state(path));
  ASSERT_EQ(back.blobs.at("model").size(), kBytes);
  EXPECT_EQ(back.blobs.at("model").back(), 'e');
  std::remove(path.c_str());
}

TEST(RunStateFileTest, DamagedFilesAreNamedErrors) {
  const std::string path = join_path(::testing::TempDir(), "damaged.ckpt");
  ASSERT_OK(save_run_state(path, sample_state(), sample_blobs()));
  ASSERT_OK_AND_ASSIGN(std::string good, read_file(path));

  ASSERT_OK(write_file_atomically(path, good.substr(0, good.size() - 3)));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "truncated in blob \"model\""});
  ASSERT_OK(write_file_atomically(path, good.substr(0, 10)));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "truncated in the header"});
  ASSERT_OK(write_file_atomically(path, good + "x"));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "padded"});

  std::string corrupt = good;
  corrupt[corrupt.size() - 4] ^= 0x40;  // in the model's bytes, the last blob
  ASSERT_OK(write_file_atomically(path, corrupt));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss,
               {path, "checksum mismatch in blob \"model\""});
  corrupt = good;
  corrupt[8 + 4 + 4 + 8 + 4 + 1] ^= 0x40;  // in the run state
  ASSERT_OK(write_file_atomically(path, corrupt));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss,
               {path, "checksum mismatch in the run state"});

  ASSERT_OK(write_file_atomically(path, "{\"this is\": \"a report, not a checkpoint\"}"));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "bad magic"});

  std::string old = good;
  old[8] = 2;  // format version 2, which kept the blobs in the run state
  ASSERT_OK(write_file_atomically(path, old));
  expect_error(load_run_state(path).status(), absl::StatusCode::kDataLoss, {path, "version 2, this build reads 3"});

  const std::string missing = join_path(::testing::TempDir(), "none.ckpt");
  expect_error(load_run_state(missing).status(), absl::StatusCode::kNotFound, {missing});
}

}  // namespace
}  // namespace ts::tasks
