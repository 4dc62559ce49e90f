// Command-line flags override the config file: typed flags, then --set; an
// unknown flag, field or bad value is an error naming it.
#include "tasks/common/flags.h"

#include <cstdlib>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "gtest/gtest.h"
#include "tasks/common/files.h"
#include "tests/tasks/common/test_task.pb.h"
#include "tests/tensor/testing.h"

ABSL_DECLARE_FLAG(std::optional<double>, lr);
ABSL_DECLARE_FLAG(std::optional<std::string>, dtype);
ABSL_DECLARE_FLAG(bool, resume);

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

void parse(std::vector<std::string> args) {
  args.insert(args.begin(), "flags_test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  parse_task_command_line(static_cast<int>(argv.size()), argv.data());
}

class FlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = join_path(::testing::TempDir(), "flags.textproto");
    ASSERT_OK(write_file_atomically(path_, "epochs: 4\nlr: 0.1\nbatch_size: 64\n"));
  }
  void TearDown() override {
    absl::SetFlag(&FLAGS_config, "");
    absl::SetFlag(&FLAGS_set, "");
    absl::SetFlag(&FLAGS_lr, std::nullopt);
    absl::SetFlag(&FLAGS_dtype, std::nullopt);
    absl::SetFlag(&FLAGS_resume, false);
  }
  std::string path_;
};

TEST_F(FlagsTest, TypedFlagsThenSetOverrideTheFile) {
  parse({"--lr=0.4", "--resume", "--set=epochs=7,toy.depth=32,checkpoint_dir=/tmp/ck,lr=0.5"});
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags(path_));
  EXPECT_EQ(c.lr(), 0.5);       // --set wins over --lr
  EXPECT_EQ(c.epochs(), 7);
  EXPECT_EQ(c.batch_size(), 64);  // from the file
  EXPECT_TRUE(c.resume());
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 32);
}

TEST_F(FlagsTest, RepeatedSetFlagsAllApplyInOrder) {
  parse({"--set=epochs=7,lr=0.5", "-set", "toy.depth=32", "--lr=0.4", "--set", "lr=0.25,batch_size=8",
         "-set=checkpoint_dir=/tmp/ck"});
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags(path_));
  EXPECT_EQ(c.epochs(), 7);
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 32);
  EXPECT_EQ(c.lr(), 0.25);  // the later --set wins
  EXPECT_EQ(c.batch_size(), 8);
  EXPECT_EQ(c.checkpoint_dir(), "/tmp/ck");
}

TEST_F(FlagsTest, TypedFlagAloneAndConfigFlag) {
  parse({"--lr=0.4", "--config=" + path_});
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags("does/not/exist.textproto"));
  EXPECT_EQ(c.lr(), 0.4);
  EXPECT_EQ(c.epochs(), 4);
}

TEST_F(FlagsTest, ErrorsNameTheFlagAndField) {
  parse({"--dtype=F64"});
  expect_error(config_from_flags(path_).status(), absl::StatusCode::kInvalidArgument, {"--dtype", "F64"});
  absl::SetFlag(&FLAGS_dtype, std::nullopt);
  parse({"--set=epochs=2,warmup=3"});
  expect_error(config_from_flags(path_).status(), absl::StatusCode::kInvalidArgument, {"--set", "'warmup'"});
  parse({"--set=epochs=0"});
  expect_error(config_from_flags(path_).status(), absl::StatusCode::kInvalidArgument, {"epochs = 0"});
  parse({"--set="});
  expect_error(config_from_flags(join_path(::testing::TempDir(), "nope")).status(),
               absl::StatusCode::kNotFound, {"nope"});
}

TEST(FlagsDeathTest, UnknownFlagIsNamed) {
  EXPECT_EXIT(parse({"--lrr=0.1"}), ::testing::ExitedWithCode(1), "Unknown command line flag 'lrr'");
  EXPECT_EXIT(parse({"--epochs=many"}), ::testing::ExitedWithCode(1), "epochs");
}

}  // namespace
}  // namespace ts::tasks
