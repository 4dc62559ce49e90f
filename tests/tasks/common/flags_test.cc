// Command-line flags override the task's compiled-in default config (or the
// --config file that replaces it): typed flags, then --set; an unknown flag,
// field or bad value is an error naming it.
#include "tasks/common/flags.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "base/files.h"
#include "gtest/gtest.h"
#include "tests/tasks/common/test_task.pb.h"
#include "tests/tensor/testing.h"

ABSL_DECLARE_FLAG(std::optional<double>, lr);
ABSL_DECLARE_FLAG(std::optional<double>, momentum);
ABSL_DECLARE_FLAG(std::optional<std::string>, dataset);
ABSL_DECLARE_FLAG(std::optional<std::string>, dtype);
ABSL_DECLARE_FLAG(bool, tf32);
ABSL_DECLARE_FLAG(bool, resume);
ABSL_DECLARE_FLAG(bool, channels_last);
ABSL_DECLARE_FLAG(bool, deterministic);
ABSL_DECLARE_FLAG(std::optional<std::string>, baseline_report);
ABSL_DECLARE_FLAG(std::optional<double>, price_per_hour);

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

// What a task binary compiles in (its config.textproto).
constexpr char kDefaultConfig[] = "epochs: 4\nsgd { lr: 0.1 }\nbatch_size: 64\n";

void parse(std::vector<std::string> args) {
  args.insert(args.begin(), "flags_test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  parse_task_command_line(static_cast<int>(argv.size()), argv.data());
}

class FlagsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    absl::SetFlag(&FLAGS_config, "");
    absl::SetFlag(&FLAGS_set, "");
    absl::SetFlag(&FLAGS_lr, std::nullopt);
    absl::SetFlag(&FLAGS_momentum, std::nullopt);
    absl::SetFlag(&FLAGS_dataset, std::nullopt);
    absl::SetFlag(&FLAGS_dtype, std::nullopt);
    absl::SetFlag(&FLAGS_tf32, false);
    absl::SetFlag(&FLAGS_resume, false);
    absl::SetFlag(&FLAGS_baseline_report, std::nullopt);
    absl::SetFlag(&FLAGS_price_per_hour, std::nullopt);
  }
};

TEST_F(FlagsTest, TypedFlagsThenSetOverrideTheDefault) {
  parse({"--lr=0.4", "--resume", "--set=epochs=7,toy.depth=32,checkpoint_dir=/tmp/ck,lr=0.5"});
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags(kDefaultConfig, "toy"));
  EXPECT_EQ(c.sgd().lr(), 0.5);  // --set wins over --lr
  EXPECT_EQ(c.epochs(), 7);
  EXPECT_EQ(c.batch_size(), 64);  // from the default
  EXPECT_TRUE(c.resume());
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 32);
}

// --lr goes into the config's optimizer; a --set that chooses another in its
// place would drop it, so the two together are an error (Adam ran at its
// own lr before).
TEST_F(FlagsTest, AnOptimizerFlagThatSetSwitchesAwayFromIsAnError) {
  parse({"--lr=0.05", "--set=adam={amsgrad: true}"});
  expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kInvalidArgument,
               {"--lr set a field of the config's optimizer, and --set chose another in its place (adam), which drops "
                "it; give it in --set (adam.lr=...) instead"});
  parse({"--lr=0.05", "--set=adam={amsgrad: true},adam.lr=0.05"});
  expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kInvalidArgument, {"--lr"});
  absl::SetFlag(&FLAGS_lr, std::nullopt);  // parsed above; absl keeps it
  parse({"--set=adam={amsgrad: true, lr: 0.05}"});
  ASSERT_OK_AND_ASSIGN(const TaskConfig c, config_from_flags(kDefaultConfig, "toy"));
  EXPECT_EQ(c.adam().lr(), 0.05);
}

// A bool flag given false turns off what the config file turned on; one
// not given leaves the file's value.
TEST_F(FlagsTest, BoolFlagsTurnFieldsOffToo) {
  parse({"--synthetic=false", "-notf32", "--channels_last", "--deterministic"});
  ASSERT_OK_AND_ASSIGN(
      TaskConfig c, config_from_flags("synthetic: true\ntf32: true\nresume: true\ncheckpoint_dir: \"/tmp\"\n", "toy"));
  EXPECT_FALSE(c.synthetic());
  EXPECT_FALSE(c.tf32());
  EXPECT_TRUE(c.channels_last());
  EXPECT_TRUE(c.deterministic());
  EXPECT_TRUE(c.resume());
  absl::SetFlag(&FLAGS_channels_last, false);
  absl::SetFlag(&FLAGS_deterministic, false);
}

// absl reads an empty value as none; a string flag given empty clears what
// the config file set (HAL's checkpoint_dir), in both of absl's forms. An
// empty enum name or output folder is an error, not ignored.
TEST_F(FlagsTest, StringFlagsGivenEmptyClearTheField) {
  const std::string file = "checkpoint_dir: \"ck\"\nbaseline_report: \"one.json\"\n";
  parse({"--checkpoint_dir=", "--baseline_report", ""});
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags(file, "toy"));
  EXPECT_EQ(c.checkpoint_dir(), "");
  EXPECT_EQ(c.baseline_report(), "");

  parse({});
  ASSERT_OK_AND_ASSIGN(c, config_from_flags(file, "toy"));
  EXPECT_EQ(c.checkpoint_dir(), "ck") << "not given: the file's";

  parse({"--lr_schedule="});
  expect_error(config_from_flags(file, "toy").status(), absl::StatusCode::kInvalidArgument,
               {"--lr_schedule", "'' is not one of"});
  parse({"--output_dir="});
  expect_error(config_from_flags(file, "toy").status(), absl::StatusCode::kInvalidArgument,
               {"output_dir = \"\"", "must name the folder"});
}

TEST_F(FlagsTest, RepeatedSetFlagsAllApplyInOrder) {
  parse({"--set=epochs=7,lr=0.5", "-set", "toy.depth=32", "--lr=0.4", "--set", "lr=0.25,batch_size=8",
         "-set=checkpoint_dir=/tmp/ck"});
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags(kDefaultConfig, "toy"));
  EXPECT_EQ(c.epochs(), 7);
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 32);
  EXPECT_EQ(c.sgd().lr(), 0.25);  // the later --set wins
  EXPECT_EQ(c.batch_size(), 8);
  EXPECT_EQ(c.checkpoint_dir(), "/tmp/ck");
}

TEST_F(FlagsTest, TypedFlagAloneAndConfigFlag) {
  const std::string path = join_path(::testing::TempDir(), "flags.textproto");
  ASSERT_OK(write_file_atomically(path, kDefaultConfig));
  parse({"--lr=0.4", "--config=" + path});
  // The file replaces the default whole: nothing of the default is merged in.
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags("epochs: 9\nname: \"compiled in\"\n", "toy"));
  EXPECT_EQ(c.sgd().lr(), 0.4);
  EXPECT_EQ(c.epochs(), 4);
  EXPECT_EQ(c.batch_size(), 64);
  EXPECT_EQ(c.name(), "");
}

TEST_F(FlagsTest, DefaultConfigAloneAndConfigSetInCode) {
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags(kDefaultConfig, "toy"));
  EXPECT_EQ(c.epochs(), 4);
  EXPECT_EQ(c.sgd().lr(), 0.1);
  const std::string path = join_path(::testing::TempDir(), "set_in_code.textproto");
  ASSERT_OK(write_file_atomically(path, "epochs: 2\n[ts.tasks.testing.toy] { depth: 8 }\n"));
  absl::SetFlag(&FLAGS_config, path);
  ASSERT_OK_AND_ASSIGN(c, config_from_flags(kDefaultConfig, "toy"));
  EXPECT_EQ(c.epochs(), 2);
  EXPECT_FALSE(c.has_sgd());
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 8);
}

TEST_F(FlagsTest, OptimizerAndDatasetFlagsSetTheirMessagesFields) {
  parse({"--momentum=0.9", "--dataset=CIFAR10"});
  ASSERT_OK_AND_ASSIGN(TaskConfig c, config_from_flags(kDefaultConfig, "toy"));
  EXPECT_EQ(c.sgd().lr(), 0.1);  // the rest of the default's sgd stays
  EXPECT_EQ(c.sgd().momentum(), 0.9);
  EXPECT_EQ(c.GetExtension(testing::toy).dataset(), testing::ToyConfig::CIFAR10);
}

TEST_F(FlagsTest, ReportFlagsSetTheirFields) {
  parse({"--baseline_report=one_rank/report.json", "--price_per_hour=2.48"});
  setenv("BUILD_WORKING_DIRECTORY", "/home/me", 1);  // as `bazel run` sets it
  absl::StatusOr<TaskConfig> c = config_from_flags(kDefaultConfig, "toy");
  unsetenv("BUILD_WORKING_DIRECTORY");
  ASSERT_OK(c.status());
  EXPECT_EQ(c->baseline_report(), "/home/me/one_rank/report.json");  // relative to where the user ran it
  EXPECT_EQ(c->price_per_hour(), 2.48);
}

TEST_F(FlagsTest, ErrorsNameTheFlagAndField) {
  parse({"--dtype=F64"});
  expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kInvalidArgument,
               {"--dtype", "F64"});
  absl::SetFlag(&FLAGS_dtype, std::nullopt);
  parse({"--dataset=IMAGENET"});
  expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kInvalidArgument,
               {"--dataset", "IMAGENET"});
  absl::SetFlag(&FLAGS_dataset, std::nullopt);
  parse({"--set=epochs=2,warmup=3"});
  expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kInvalidArgument,
               {"--set", "'warmup'"});
  parse({"--set=epochs=0"});
  expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kInvalidArgument, {"epochs = 0"});
  parse({"--set="});
  expect_error(config_from_flags("epochs: 4\nlr: 0.1\n", "toy").status(), absl::StatusCode::kInvalidArgument,
               {"toy default config:2:", "lr"});
  parse({"--config=" + join_path(::testing::TempDir(), "nope")});
  expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kNotFound, {"nope"});
}

// --set splits at commas outside quotes and brackets; one left open would
// swallow the assignments after it, and a value is one field's.
TEST_F(FlagsTest, SetRefusesWhatWouldSetTheWrongFields) {
  const std::pair<std::string, std::string> cases[] = {
      {"--set=data_path=/data/bob's,epochs=9", "unclosed '"},
      {"--set=output_dir=out]x,epochs=9", "']' closes nothing"},
      {"--set=lr_milestones=[3,epochs=9", "unclosed '['"},
      {"--set=epochs=3 batch_size: 7", "sets other fields too"},
      {"--set=epochs.=4", "empty field name"},
  };
  for (const auto& [flag, why] : cases) {
    parse({flag});
    expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kInvalidArgument, {why});
  }
  parse({"--set=data_path=\"/data/bob's\",epochs=9"});
  ASSERT_OK_AND_ASSIGN(const TaskConfig c, config_from_flags(kDefaultConfig, "toy"));
  EXPECT_EQ(c.data_path(), "/data/bob's");
  EXPECT_EQ(c.epochs(), 9);
}

// absl reads a flagfile itself: its --set and bool flags would not reach
// the config, so it is refused.
TEST_F(FlagsTest, FlagfileIsRefused) {
  const std::string path = join_path(::testing::TempDir(), "flags.txt");
  ASSERT_OK(write_file_atomically(path, "--set=batch_size=7\n"));
  parse({"--flagfile=" + path});
  expect_error(config_from_flags(kDefaultConfig, "toy").status(), absl::StatusCode::kInvalidArgument,
               {"--flagfile is not supported"});
}

TEST_F(FlagsTest, DtypeInAnyCaseAndTf32) {
  parse({"--dtype=bf16", "--tf32"});
  absl::StatusOr<TaskConfig> c = config_from_flags(kDefaultConfig, "toy");
  ASSERT_OK(c.status());
  EXPECT_EQ(c->dtype(), TaskConfig::BF16);
  EXPECT_TRUE(c->tf32());
}

TEST(FlagsDeathTest, UnknownFlagIsNamed) {
  EXPECT_EXIT(parse({"--lrr=0.1"}), ::testing::ExitedWithCode(1), "Unknown command line flag 'lrr'");
  EXPECT_EXIT(parse({"--epochs=many"}), ::testing::ExitedWithCode(1), "epochs");
}

}  // namespace
}  // namespace ts::tasks
