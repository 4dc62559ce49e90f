// The configs the task binaries ship load and validate, and say what their
// READMEs promise of them.
#include <string>

#include "gtest/gtest.h"
#include "tasks/common/config.h"
#include "tasks/logreg/logreg.pb.h"
#include "tasks/lstm_lm/lstm_lm.pb.h"
#include "tasks/resnet20/resnet20.pb.h"
#include "tasks/resnet50/resnet50.pb.h"
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

TEST(ShippedConfigs, LstmLmDefaultIsTheShortFortunesRun) {
  const TaskConfig c = load("tasks/lstm_lm/config.textproto");
  EXPECT_EQ(c.name(), "lstm_lm");
  EXPECT_EQ(c.target_metric(), "perplexity");
  EXPECT_TRUE(c.target_minimize());
  EXPECT_DOUBLE_EQ(c.grad_clip_norm(), 0.25);
  ASSERT_TRUE(c.has_sgd());
  EXPECT_DOUBLE_EQ(c.sgd().lr(), 30);
  EXPECT_EQ(c.GetExtension(lstm_lm).dataset(), LstmLmConfig::FORTUNES);
}

TEST(ShippedConfigs, LstmLmMlbenchIsTheFullRecipe) {
  const TaskConfig c = load("tasks/lstm_lm/mlbench.textproto");
  EXPECT_EQ(c.epochs(), 750);
  EXPECT_EQ(c.batch_size(), 80);
  EXPECT_DOUBLE_EQ(c.grad_clip_norm(), 0.25);
  ASSERT_TRUE(c.has_sgd());
  EXPECT_DOUBLE_EQ(c.sgd().lr(), 30);
  EXPECT_DOUBLE_EQ(c.sgd().weight_decay(), 1.2e-6);
  EXPECT_EQ(c.sgd().nt_asgd_nonmono(), 5);
  EXPECT_DOUBLE_EQ(c.warmup_epochs(), 0) << "MLBench's 3k-epoch warm-up comes from the sqrt scaling rule";
  EXPECT_DOUBLE_EQ(c.target_value(), 70);
  EXPECT_TRUE(c.target_minimize());
  const LstmLmConfig& lm = c.GetExtension(lstm_lm);
  EXPECT_EQ(lm.dataset(), LstmLmConfig::WIKITEXT2);
  EXPECT_EQ(lm.embedding_size(), 400);
  EXPECT_EQ(lm.hidden_size(), 1150);
  EXPECT_EQ(lm.num_layers(), 3);
  EXPECT_EQ(lm.bptt(), 70);
  EXPECT_TRUE(lm.random_bptt());
  EXPECT_EQ(lm.eval_bptt(), 10);
  EXPECT_DOUBLE_EQ(lm.ar_alpha(), 2);
  EXPECT_DOUBLE_EQ(lm.tar_beta(), 1);
}

TEST(ShippedConfigs, Resnet50DefaultIsTheShortJpegFolderRun) {
  const TaskConfig c = load("tasks/resnet50/config.textproto");
  EXPECT_EQ(c.name(), "resnet50");
  const ResNet50Config& r = c.GetExtension(resnet50);
  EXPECT_EQ(r.dataset(), ResNet50Config::FASHION_MNIST_JPEG);
  EXPECT_EQ(r.model(), "resnet50");
  EXPECT_GT(r.jpeg_limit_per_class(), 0) << "the default run must stay short";
}

TEST(ShippedConfigs, Resnet50HalIsTheFullRecipe) {
  const TaskConfig c = load("tasks/resnet50/hal.textproto");
  EXPECT_EQ(c.epochs(), 90);
  EXPECT_EQ(c.batch_size(), 208);
  EXPECT_EQ(c.dtype(), TaskConfig::F16);
  EXPECT_TRUE(c.channels_last());
  ASSERT_TRUE(c.has_sgd());
  EXPECT_DOUBLE_EQ(c.sgd().lr(), 0.1 * 208 / 256);
  EXPECT_DOUBLE_EQ(c.sgd().momentum(), 0.9);
  EXPECT_FALSE(c.sgd().nesterov());
  EXPECT_DOUBLE_EQ(c.sgd().weight_decay(), 1e-4);
  EXPECT_DOUBLE_EQ(c.warmup_epochs(), 5);
  EXPECT_EQ(c.lr_schedule(), TaskConfig::MULTISTEP);
  ASSERT_EQ(c.lr_milestones_size(), 3);
  EXPECT_EQ(c.lr_milestones(0), 30);
  EXPECT_EQ(c.lr_milestones(1), 60);
  EXPECT_EQ(c.lr_milestones(2), 80);
  EXPECT_DOUBLE_EQ(c.target_value(), 0.76);
  ASSERT_EQ(c.more_targets_size(), 1);
  EXPECT_EQ(c.more_targets(0).metric(), "top5_accuracy");
  EXPECT_DOUBLE_EQ(c.more_targets(0).value(), 0.93);
  const ResNet50Config& r = c.GetExtension(resnet50);
  EXPECT_EQ(r.dataset(), ResNet50Config::IMAGE_FOLDER);
  EXPECT_EQ(r.image_size(), 224);
  EXPECT_EQ(r.eval_resize(), 256);
  EXPECT_DOUBLE_EQ(r.min_crop_scale(), 0.08);
}

}  // namespace
}  // namespace ts::tasks
