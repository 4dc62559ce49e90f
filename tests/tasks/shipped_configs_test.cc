// The configs the task binaries ship load and validate, and say what their
// READMEs promise of them.
#include <string>

#include "gtest/gtest.h"
#include "tasks/common/config.h"
#include "tasks/logreg/logreg.pb.h"
#include "tasks/resnet20/resnet20.pb.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

TaskConfig load(const std::string& path) {
  absl::StatusOr<TaskConfig> config = load_config(path);
  EXPECT_TRUE(config.ok()) << path << ": " << config.status();
  if (!config.ok()) return TaskConfig();
  const absl::Status valid = validate_config(*config);
  EXPECT_TRUE(valid.ok()) << path << ": " << valid;
  return *config;
}

TEST(ShippedConfigs, Resnet20DefaultIsTheShortRunWithADecay) {
  const TaskConfig c = load("tasks/resnet20/config.textproto");
  EXPECT_EQ(c.name(), "resnet20");
  EXPECT_EQ(c.batch_size(), 128);
  EXPECT_EQ(c.lr_schedule(), TaskConfig::MULTISTEP);
  ASSERT_EQ(c.lr_milestones_size(), 1);
  EXPECT_LT(c.lr_milestones(0), c.epochs()) << "the decay must happen within the run";
  EXPECT_DOUBLE_EQ(c.target_value(), 0.90);
  EXPECT_EQ(c.GetExtension(resnet20).depth(), 20);
}

TEST(ShippedConfigs, Resnet20MlbenchIsTheFullRecipe) {
  const TaskConfig c = load("tasks/resnet20/mlbench.textproto");
  EXPECT_EQ(c.name(), "resnet20");
  EXPECT_EQ(c.epochs(), 164);
  EXPECT_EQ(c.batch_size(), 128);
  ASSERT_TRUE(c.has_sgd());
  EXPECT_DOUBLE_EQ(c.sgd().lr(), 0.02);
  EXPECT_DOUBLE_EQ(c.sgd().momentum(), 0.9);
  EXPECT_TRUE(c.sgd().nesterov());
  EXPECT_DOUBLE_EQ(c.sgd().weight_decay(), 1e-4);
  EXPECT_EQ(c.lr_schedule(), TaskConfig::PLATEAU);
}

TEST(ShippedConfigs, LogregDefault) {
  const TaskConfig c = load("tasks/logreg/config.textproto");
  EXPECT_EQ(c.name(), "logreg");
  EXPECT_EQ(c.lr_schedule(), TaskConfig::PLATEAU);
  EXPECT_DOUBLE_EQ(c.GetExtension(logreg).l2(), 2.5e-6);
}

}  // namespace
}  // namespace ts::tasks
