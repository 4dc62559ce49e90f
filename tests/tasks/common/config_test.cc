// Config files parse with errors naming file and line; overrides by field
// name set every kind of field, task extensions included, and reject unknown
// fields and bad values by name.
#include "tasks/common/config.h"

#include <cstdlib>

#include "gtest/gtest.h"
#include "tasks/common/files.h"
#include "tests/tasks/common/test_task.pb.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

TEST(ConfigTest, LoadsTextProtoWithExtension) {
  const std::string path = join_path(::testing::TempDir(), "task.textproto");
  ASSERT_OK(write_file_atomically(path, R"(
    # a comment
    name: "toy"
    epochs: 3
    lr: 0.4
    lr_schedule: MULTISTEP
    lr_milestones: [1, 2]
    dataset: FASHION_MNIST
    [ts.tasks.testing.toy] { depth: 56 }
  )"));
  ASSERT_OK_AND_ASSIGN(TaskConfig c, load_config(path));
  EXPECT_EQ(c.name(), "toy");
  EXPECT_EQ(c.epochs(), 3);
  EXPECT_EQ(c.lr(), 0.4);
  EXPECT_EQ(c.lr_schedule(), TaskConfig::MULTISTEP);
  EXPECT_EQ(c.lr_milestones_size(), 2);
  EXPECT_EQ(c.dataset(), TaskConfig::FASHION_MNIST);
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 56);
  EXPECT_EQ(c.batch_size(), 32);  // default
}

TEST(ConfigTest, ParseErrorsNameFileLineAndColumn) {
  expect_error(parse_config("epochs: 3\nlrr: 0.1\n", "cfg.textproto").status(), absl::StatusCode::kInvalidArgument,
               {"cfg.textproto:2:", "lrr"});
  expect_error(parse_config("lr: 0.1\n\nepochs: \"x\"\n", "cfg.textproto").status(),
               absl::StatusCode::kInvalidArgument, {"cfg.textproto:3:9"});
  expect_error(parse_config("lr_schedule: SOMETIMES", "c").status(), absl::StatusCode::kInvalidArgument,
               {"c:1:", "SOMETIMES"});
  const std::string missing = join_path(::testing::TempDir(), "missing.textproto");
  expect_error(load_config(missing).status(), absl::StatusCode::kNotFound, {"config", missing});
}

TEST(ConfigTest, SetsFieldsOfEveryKind) {
  TaskConfig c;
  ASSERT_OK(set_config_field(c, "lr", "0.25"));
  ASSERT_OK(set_config_field(c, "nesterov", "true"));
  ASSERT_OK(set_config_field(c, "seed", "18446744073709551615"));
  ASSERT_OK(set_config_field(c, "lr_schedule", "COSINE"));
  ASSERT_OK(set_config_field(c, "data_path", "/data/a b,c"));
  ASSERT_OK(set_config_field(c, "name", "\"quoted\""));
  ASSERT_OK(set_config_field(c, "lr_milestones", "[5, 9]"));
  ASSERT_OK(set_config_field(c, "lr_milestones", "[7]"));  // replaces the list
  ASSERT_OK(set_config_field(c, "toy.depth", "110"));
  ASSERT_OK(set_config_field(c, "[ts.tasks.testing.toy].variant", "bottleneck"));
  EXPECT_EQ(c.lr(), 0.25);
  EXPECT_TRUE(c.nesterov());
  EXPECT_EQ(c.seed(), 18446744073709551615u);
  EXPECT_EQ(c.lr_schedule(), TaskConfig::COSINE);
  EXPECT_EQ(c.data_path(), "/data/a b,c");
  EXPECT_EQ(c.name(), "quoted");
  ASSERT_EQ(c.lr_milestones_size(), 1);
  EXPECT_EQ(c.lr_milestones(0), 7);
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 110);
  EXPECT_EQ(c.GetExtension(testing::toy).variant(), "bottleneck");
}

TEST(ConfigTest, SetErrorsNameTheField) {
  TaskConfig c;
  expect_error(set_config_field(c, "lrr", "1"), absl::StatusCode::kInvalidArgument, {"unknown config field 'lrr'"});
  expect_error(set_config_field(c, "toy.width", "1"), absl::StatusCode::kInvalidArgument,
               {"unknown config field 'width'", "toy.width"});
  expect_error(set_config_field(c, "lr.x", "1"), absl::StatusCode::kInvalidArgument, {"'lr'", "no subfields"});
  expect_error(set_config_field(c, "epochs", "three"), absl::StatusCode::kInvalidArgument,
               {"bad value for config field 'epochs'", "three"});
  expect_error(set_config_field(c, "epochs", "99999999999"), absl::StatusCode::kInvalidArgument, {"'epochs'"});
  expect_error(set_config_field(c, "dtype", "F64"), absl::StatusCode::kInvalidArgument, {"'dtype'", "F64"});
  expect_error(set_config_field(c, "lr_milestones", "5"), absl::StatusCode::kInvalidArgument,
               {"'lr_milestones' is repeated"});
  expect_error(set_config_field(c, "[ts.tasks.toy", "1"), absl::StatusCode::kInvalidArgument, {"unclosed"});
}

TEST(ConfigTest, OverrideListSplitsOutsideQuotesAndBrackets) {
  TaskConfig c;
  ASSERT_OK(apply_overrides(c, " lr=0.5, lr_milestones=[3, 4],name='a,b' ,epochs=2,"));
  EXPECT_EQ(c.lr(), 0.5);
  EXPECT_EQ(c.lr_milestones_size(), 2);
  EXPECT_EQ(c.name(), "a,b");
  EXPECT_EQ(c.epochs(), 2);
  expect_error(apply_overrides(c, "lr=0.5,momentum"), absl::StatusCode::kInvalidArgument,
               {"--set", "expected field=value", "momentum"});
  expect_error(apply_overrides(c, "epochs=1,batchsize=8"), absl::StatusCode::kInvalidArgument,
               {"--set", "'batchsize'"});
}

TEST(ConfigTest, ValidationListsEveryProblem) {
  TaskConfig c;
  ASSERT_OK(validate_config(c));
  c.set_epochs(0);
  c.set_nesterov(true);
  c.set_resume(true);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument,
               {"epochs = 0", "nesterov", "needs momentum", "resume", "needs checkpoint_dir"});
}

TEST(ConfigTest, JsonHasEveryFieldAndSetExtensions) {
  TaskConfig c;
  c.set_lr(0.3);
  c.add_lr_milestones(4);
  Json j = config_to_json(c);
  EXPECT_EQ(j.find("lr")->as_double(), 0.3);
  EXPECT_EQ(j.find("batch_size")->as_int(), 32);  // default shown
  EXPECT_EQ(j.find("lr_schedule")->as_string(), "CONSTANT");
  EXPECT_EQ(j.find("lr_milestones")->as_array().size(), 1u);
  EXPECT_EQ(j.find("[ts.tasks.testing.toy]"), nullptr);
  c.MutableExtension(testing::toy)->set_depth(8);
  j = config_to_json(c);
  ASSERT_NE(j.find("[ts.tasks.testing.toy]"), nullptr);
  EXPECT_EQ(j.find("[ts.tasks.testing.toy]")->find("depth")->as_int(), 8);
  EXPECT_EQ(j.find("[ts.tasks.testing.toy]")->find("variant")->as_string(), "basic");
}

}  // namespace
}  // namespace ts::tasks
