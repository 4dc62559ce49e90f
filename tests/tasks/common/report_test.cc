// The report's sections, per-epoch records and free-form sections, written
// atomically and read back.
#include "tasks/common/report.h"

#include <cstdlib>

#include "gtest/gtest.h"
#include "tasks/common/files.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

TEST(ReportTest, WritesSectionsInAFixedOrder) {
  Report r;
  r.set("world", Json::object());
  EpochRecord e;
  e.epoch = 1;
  e.steps = 10;
  e.train_loss = 0.5;
  e.metrics = {{"accuracy", 0.75}};
  e.lr = 0.1;
  e.epoch_seconds = 2;
  e.wall_seconds = 2.5;
  r.add_epoch(e);
  Json row = Json::object();
  row["bytes"] = 1024;
  r.extra("allreduce").push_back(row);
  const std::string path = join_path(::testing::TempDir(), "report.json");
  ASSERT_OK(r.write(path));
  ASSERT_OK_AND_ASSIGN(std::string text, read_file(path));
  ASSERT_OK_AND_ASSIGN(Json j, parse_json(text));
  const auto& o = j.as_object();
  std::vector<std::string> keys;
  for (const auto& [k, v] : o) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"format", "config", "environment", "world", "epochs", "throughput",
                                            "time_to_target", "time_breakdown", "extra"}));
  const Json& epoch = j.find("epochs")->as_array().at(0);
  EXPECT_EQ(epoch.find("eval")->find("accuracy")->as_double(), 0.75);
  EXPECT_EQ(epoch.find("wall_seconds")->as_double(), 2.5);
  EXPECT_EQ(j.find("extra")->find("allreduce")->as_array().at(0).find("bytes")->as_int(), 1024);
}

TEST(ReportTest, RestoresEpochs) {
  Report r;
  ASSERT_OK_AND_ASSIGN(Json epochs, parse_json(R"([{"epoch": 1}, {"epoch": 2}])"));
  ASSERT_OK(r.restore_epochs(epochs));
  r.add_epoch(EpochRecord{.epoch = 3});
  EXPECT_EQ(r.json().find("epochs")->as_array().size(), 3u);
  ts::testing::expect_error(r.restore_epochs(Json(1)), absl::StatusCode::kInvalidArgument, {"array"});
}

}  // namespace
}  // namespace ts::tasks
