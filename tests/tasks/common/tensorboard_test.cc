// Event files read back record by record with both CRCs checked, the way
// TensorBoard reads them.
#include <dirent.h>

#include <cstdlib>
#include <string>

#include "base/crc32c.h"
#include "base/files.h"
#include "gtest/gtest.h"
#include "tasks/common/event.pb.h"
#include "tasks/common/event_writer.h"
#include "tasks/common/tfrecord.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

TEST(TfRecordTest, FramesAndDetectsCorruption) {
  std::string bytes;
  append_tfrecord("hello", bytes);
  append_tfrecord("", bytes);
  ASSERT_EQ(bytes.size(), 16u + 5 + 16u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x05\0\0\0\0\0\0\0", 8));
  ASSERT_OK_AND_ASSIGN(auto records, read_tfrecords(bytes, "mem"));
  EXPECT_EQ(records, (std::vector<std::string>{"hello", ""}));

  std::string flipped = bytes;
  flipped[13] ^= 1;  // inside "hello"
  expect_error(read_tfrecords(flipped, "f.tfevents").status(), absl::StatusCode::kDataLoss,
               {"f.tfevents", "record 0", "data CRC"});
  flipped = bytes;
  flipped[0] ^= 1;
  expect_error(read_tfrecords(flipped, "f").status(), absl::StatusCode::kDataLoss, {"length CRC"});
  expect_error(read_tfrecords(bytes.substr(0, bytes.size() - 2), "f").status(), absl::StatusCode::kDataLoss,
               {"record 1", "truncated"});
}

TEST(EventWriterTest, WritesVersionThenScalars) {
  const std::string dir = join_path(::testing::TempDir(), "tb");
  std::string path;
  {
    ASSERT_OK_AND_ASSIGN(auto writer, EventWriter::create(dir));
    path = writer->path();
    ASSERT_OK(writer->add_scalar("train/loss", 0.5, 1, 1000.25));
    ASSERT_OK(writer->add_scalar("eval/accuracy", 0.875, 2, 1001.5));
    ASSERT_OK_AND_ASSIGN(auto second, EventWriter::create(dir));  // same second: its own file
    EXPECT_NE(second->path(), path);
  }
  EXPECT_NE(path.find("/events.out.tfevents."), std::string::npos);
  ASSERT_OK_AND_ASSIGN(std::string bytes, read_file(path));
  ASSERT_OK_AND_ASSIGN(auto records, read_tfrecords(bytes, path));
  ASSERT_EQ(records.size(), 3u);
  tensorboard::Event e;
  ASSERT_TRUE(e.ParseFromString(records[0]));
  EXPECT_EQ(e.file_version(), "brain.Event:2");
  EXPECT_GT(e.wall_time(), 1.6e9);
  ASSERT_TRUE(e.ParseFromString(records[2]));
  EXPECT_EQ(e.step(), 2);
  EXPECT_EQ(e.wall_time(), 1001.5);
  ASSERT_EQ(e.summary().value_size(), 1);
  EXPECT_EQ(e.summary().value(0).tag(), "eval/accuracy");
  EXPECT_EQ(e.summary().value(0).simple_value(), 0.875f);
  // TensorBoard's wire format: Event.summary is field 5 (length-delimited),
  // Summary.value field 1, Value.tag 1, Value.simple_value 2 (fixed32).
  EXPECT_EQ(records[2][11], '\x2a');  // after wall_time (1+8 bytes) and step (1+1): field 5, type 2
  EXPECT_NE(records[2].find("\x0a\x0d"
                            "eval/accuracy\x15"),
            std::string::npos);
}

// A resumed session's start: Event.session_log is field 7 of TensorBoard's
// event.proto, its status START (1) field 1, which TensorBoard's purge reads.
TEST(EventWriterTest, SessionStartIsTensorBoardsSessionLog) {
  std::string path;
  {
    ASSERT_OK_AND_ASSIGN(auto writer, EventWriter::create(join_path(::testing::TempDir(), "tb_session")));
    path = writer->path();
    ASSERT_OK(writer->add_session_start(14));
  }
  ASSERT_OK_AND_ASSIGN(std::string bytes, read_file(path));
  ASSERT_OK_AND_ASSIGN(auto records, read_tfrecords(bytes, path));
  ASSERT_EQ(records.size(), 2u);
  tensorboard::Event e;
  ASSERT_TRUE(e.ParseFromString(records[1]));
  EXPECT_EQ(e.step(), 14);
  EXPECT_EQ(e.session_log().status(), tensorboard::SessionLog::START);
  EXPECT_NE(records[1].find(std::string("\x3a\x02\x08\x01", 4)), std::string::npos);
}

}  // namespace
}  // namespace ts::tasks
