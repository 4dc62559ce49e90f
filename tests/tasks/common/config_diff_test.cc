// config_differences: the fields two configs differ in, task extensions
// included; unset and default agree; ignored fields are left out.
#include "tasks/common/config_diff.h"

#include "gtest/gtest.h"
#include "tests/tasks/common/test_task.pb.h"

namespace ts::tasks {
namespace {

TEST(ConfigDiffTest, NamesEveryDifferingFieldExtensionsIncluded) {
  TaskConfig a;
  a.mutable_sgd()->set_lr(0.1);
  a.MutableExtension(testing::toy);  // present, every field at its default
  TaskConfig b = a;
  EXPECT_EQ(config_differences(a, b, {}), "");
  b.mutable_sgd()->set_lr(0.2);
  b.MutableExtension(testing::toy)->set_depth(56);
  b.add_lr_milestones(30);
  const std::string d = config_differences(a, b, {});
  EXPECT_NE(d.find("sgd.lr: 0.1 -> 0.2"), std::string::npos) << d;
  EXPECT_NE(d.find("(ts.tasks.testing.toy).depth: 20 -> 56"), std::string::npos) << d;
  EXPECT_NE(d.find("added: lr_milestones[0]: 30"), std::string::npos) << d;
  EXPECT_EQ(d.find("ignored"), std::string::npos) << d;
}

TEST(ConfigDiffTest, UnsetAndDefaultAgreeAndIgnoredFieldsAreLeftOut) {
  TaskConfig a;
  TaskConfig b;
  b.set_batch_size(32);  // the default
  EXPECT_EQ(config_differences(a, b, {}), "");
  b.set_epochs(90);
  b.set_output_dir("elsewhere");
  EXPECT_EQ(config_differences(a, b, {"epochs", "output_dir"}), "");
  EXPECT_EQ(config_differences(a, b, {"epochs"}), "output_dir: \"output\" -> \"elsewhere\"");
}

// A task's fields named in ignored_in_tasks are left out too (a cache on
// each node's own disk), whichever extension holds them.
TEST(ConfigDiffTest, TaskFieldsNamedAsIgnoredAreLeftOut) {
  TaskConfig a;
  a.MutableExtension(testing::toy)->set_cache_dir("/scratch/node1");
  TaskConfig b;
  b.MutableExtension(testing::toy)->set_cache_dir("/scratch/node2");
  EXPECT_EQ(config_differences(a, b, {}), "(ts.tasks.testing.toy).cache_dir: \"/scratch/node1\" -> \"/scratch/node2\"");
  EXPECT_EQ(config_differences(a, b, {}, kTaskWhereFields), "");
  EXPECT_EQ(config_differences(TaskConfig(), b, {}, kTaskWhereFields), "");
  // Only those: another field of the same extension still counts.
  b.MutableExtension(testing::toy)->set_depth(56);
  EXPECT_EQ(config_differences(a, b, {}, kTaskWhereFields), "(ts.tasks.testing.toy).depth: 20 -> 56");
}

// Another member of the optimizer oneof is that change, even with both at
// their defaults (member by member they would be equivalent).
TEST(ConfigDiffTest, AnotherOptimizerIsNamedAsSuch) {
  TaskConfig a;
  a.mutable_sgd();
  TaskConfig b;
  b.mutable_adam();
  EXPECT_EQ(config_differences(a, b, {}), "optimizer: sgd -> adam");
  a.mutable_sgd()->set_momentum(0.9);
  EXPECT_EQ(config_differences(a, b, {}), "optimizer: sgd -> adam");
  // No optimizer is SGD at its defaults.
  EXPECT_EQ(config_differences(a, TaskConfig(), {}), "sgd.momentum: 0.9 -> 0");
  EXPECT_EQ(config_differences(TaskConfig(), b, {}), "optimizer: sgd -> adam");
  TaskConfig sgd_at_defaults;
  sgd_at_defaults.mutable_sgd()->set_lr(0.1);
  EXPECT_EQ(config_differences(TaskConfig(), sgd_at_defaults, {}), "");
}

}  // namespace
}  // namespace ts::tasks
