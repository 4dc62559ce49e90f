// Config files parse with errors naming file and line; overrides by field
// name set every kind of field, the optimizer's and task extensions'
// included (short names resolve to them), and reject unknown, ambiguous
// fields and bad values by name; validation lists every broken rule.
#include "tasks/common/config.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "base/files.h"
#include "gtest/gtest.h"
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
    sgd { lr: 0.4 momentum: 0.9 }
    lr_schedule: MULTISTEP
    lr_milestones: [1, 2]
    [ts.tasks.testing.toy] { depth: 56 dataset: CIFAR10 }
  )"));
  ASSERT_OK_AND_ASSIGN(TaskConfig c, load_config(path));
  EXPECT_EQ(c.name(), "toy");
  EXPECT_EQ(c.epochs(), 3);
  ASSERT_TRUE(c.has_sgd());
  EXPECT_EQ(c.sgd().lr(), 0.4);
  EXPECT_EQ(c.sgd().momentum(), 0.9);
  EXPECT_FALSE(c.sgd().nesterov());  // default
  EXPECT_EQ(c.lr_schedule(), TaskConfig::MULTISTEP);
  EXPECT_EQ(c.lr_milestones_size(), 2);
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 56);
  EXPECT_EQ(c.GetExtension(testing::toy).dataset(), testing::ToyConfig::CIFAR10);
  EXPECT_EQ(c.batch_size(), 32);  // default
}

TEST(ConfigTest, ParseErrorsNameFileLineAndColumn) {
  expect_error(parse_config("epochs: 3\nlrr: 0.1\n", "cfg.textproto").status(), absl::StatusCode::kInvalidArgument,
               {"cfg.textproto:2:", "lrr"});
  expect_error(parse_config("sgd { lr: 0.1 }\n\nepochs: \"x\"\n", "cfg.textproto").status(),
               absl::StatusCode::kInvalidArgument, {"cfg.textproto:3:9"});
  expect_error(parse_config("lr_schedule: SOMETIMES", "c").status(), absl::StatusCode::kInvalidArgument,
               {"c:1:", "SOMETIMES"});
  const std::string missing = join_path(::testing::TempDir(), "missing.textproto");
  expect_error(load_config(missing).status(), absl::StatusCode::kNotFound, {"config", missing});
}

TEST(ConfigTest, FilesOfTheOldSchemaAreErrors) {
  // The optimizer's fields moved into its message and the global dataset
  // enum into the tasks' own: old files fail on the first moved field
  // rather than run with defaults.
  expect_error(parse_config("epochs: 3\nlr: 0.1\n", "old.textproto").status(), absl::StatusCode::kInvalidArgument,
               {"old.textproto:2:", "lr"});
  expect_error(parse_config("dataset: CIFAR10\n", "old.textproto").status(), absl::StatusCode::kInvalidArgument,
               {"old.textproto:1:", "dataset"});
}

TEST(ConfigTest, SetsFieldsOfEveryKind) {
  TaskConfig c;
  ASSERT_OK(set_config_field(c, "lr", "0.25"));
  ASSERT_OK(set_config_field(c, "nesterov", "true"));
  ASSERT_OK(set_config_field(c, "sgd.momentum", "0.5"));
  ASSERT_OK(set_config_field(c, "seed", "18446744073709551615"));
  ASSERT_OK(set_config_field(c, "lr_schedule", "COSINE"));
  ASSERT_OK(set_config_field(c, "data_path", "/data/a b,c"));
  ASSERT_OK(set_config_field(c, "name", "\"quoted\""));
  ASSERT_OK(set_config_field(c, "lr_milestones", "[5, 9]"));
  ASSERT_OK(set_config_field(c, "lr_milestones", "[7]"));  // replaces the list
  ASSERT_OK(set_config_field(c, "toy.depth", "110"));
  ASSERT_OK(set_config_field(c, "[ts.tasks.testing.toy].variant", "bottleneck"));
  ASSERT_OK(set_config_field(c, "toy.dataset", "CIFAR10"));
  ASSERT_TRUE(c.has_sgd());
  EXPECT_EQ(c.sgd().lr(), 0.25);
  EXPECT_TRUE(c.sgd().nesterov());
  EXPECT_EQ(c.sgd().momentum(), 0.5);
  EXPECT_EQ(c.seed(), 18446744073709551615u);
  EXPECT_EQ(c.lr_schedule(), TaskConfig::COSINE);
  EXPECT_EQ(c.data_path(), "/data/a b,c");
  EXPECT_EQ(c.name(), "quoted");
  ASSERT_EQ(c.lr_milestones_size(), 1);
  EXPECT_EQ(c.lr_milestones(0), 7);
  EXPECT_EQ(c.GetExtension(testing::toy).depth(), 110);
  EXPECT_EQ(c.GetExtension(testing::toy).variant(), "bottleneck");
  EXPECT_EQ(c.GetExtension(testing::toy).dataset(), testing::ToyConfig::CIFAR10);
}

TEST(ConfigTest, ShortNamesResolveToTheOptimizerAndTheTaskExtension) {
  TaskConfig c;
  ASSERT_OK(set_config_field(c, "lr", "0.4"));  // no optimizer chosen: SGD's
  ASSERT_OK(set_config_field(c, "weight_decay", "1e-4"));
  ASSERT_OK(set_config_field(c, "dataset", "CIFAR10"));
  ASSERT_OK(set_config_field(c, "variant", "wide"));
  ASSERT_TRUE(c.has_sgd());
  EXPECT_EQ(c.sgd().lr(), 0.4);
  EXPECT_EQ(c.sgd().weight_decay(), 1e-4);
  EXPECT_EQ(c.GetExtension(testing::toy).dataset(), testing::ToyConfig::CIFAR10);
  EXPECT_EQ(c.GetExtension(testing::toy).variant(), "wide");
  // A name TaskConfig has is TaskConfig's, even where an extension has it too.
  ASSERT_OK(set_config_field(c, "epochs", "6"));
  EXPECT_EQ(c.epochs(), 6);
  EXPECT_FALSE(c.HasExtension(testing::other_toy));
  // A short name's value is checked as the resolved field's.
  expect_error(set_config_field(c, "dataset", "IMAGENET"), absl::StatusCode::kInvalidArgument,
               {"[ts.tasks.testing.toy].dataset", "IMAGENET"});
}

TEST(ConfigTest, AmbiguousAndUnknownShortNamesAreErrors) {
  TaskConfig c;
  expect_error(set_config_field(c, "depth", "56"), absl::StatusCode::kInvalidArgument,
               {"'depth' is ambiguous", "[ts.tasks.testing.toy].depth", "[ts.tasks.testing.other_toy].depth",
                "give the full path"});
  EXPECT_FALSE(c.HasExtension(testing::toy));
  ASSERT_OK(set_config_field(c, "other_toy.depth", "56"));
  EXPECT_EQ(c.GetExtension(testing::other_toy).depth(), 56);
  expect_error(set_config_field(c, "momentumm", "0.9"), absl::StatusCode::kInvalidArgument,
               {"unknown config field 'momentumm'", "ts.tasks.TaskConfig has no such field"});
  EXPECT_FALSE(c.has_sgd());
}

TEST(ConfigTest, SetErrorsNameTheField) {
  TaskConfig c;
  expect_error(set_config_field(c, "lrr", "1"), absl::StatusCode::kInvalidArgument, {"unknown config field 'lrr'"});
  expect_error(set_config_field(c, "toy.width", "1"), absl::StatusCode::kInvalidArgument,
               {"unknown config field 'width'", "toy.width"});
  expect_error(set_config_field(c, "sgd.lr.x", "1"), absl::StatusCode::kInvalidArgument, {"'lr'", "no subfields"});
  // In the user's terms: what an enum takes, what kind of literal a scalar
  // wants; a message value's columns count from the value's start.
  expect_error(set_config_field(c, "epochs", "three"), absl::StatusCode::kInvalidArgument,
               {"bad value for config field 'epochs' (int32): 'three' is not a valid int32"});
  expect_error(set_config_field(c, "epochs", "99999999999"), absl::StatusCode::kInvalidArgument,
               {"'epochs'", "'99999999999' is not a valid int32"});
  expect_error(set_config_field(c, "dtype", "F64"), absl::StatusCode::kInvalidArgument,
               {"'dtype'", "'F64' is not one of F32, F16, BF16"});
  expect_error(set_config_field(c, "synthetic", "yes"), absl::StatusCode::kInvalidArgument,
               {"'synthetic'", "'yes' is not true or false"});
  expect_error(set_config_field(c, "sgd", "{lr: x}"), absl::StatusCode::kInvalidArgument,
               {"'sgd'", "value '{lr: x}':1:6:"});
  expect_error(set_config_field(c, "lr_milestones", "5"), absl::StatusCode::kInvalidArgument,
               {"'lr_milestones' is repeated"});
  expect_error(set_config_field(c, "[ts.tasks.toy", "1"), absl::StatusCode::kInvalidArgument, {"unclosed"});
}

TEST(ConfigTest, OverrideListSplitsOutsideQuotesAndBrackets) {
  TaskConfig c;
  ASSERT_OK(apply_overrides(c, " lr=0.5, lr_milestones=[3, 4],name='a,b' ,epochs=2,"));
  EXPECT_EQ(c.sgd().lr(), 0.5);
  EXPECT_EQ(c.lr_milestones_size(), 2);
  EXPECT_EQ(c.name(), "a,b");
  EXPECT_EQ(c.epochs(), 2);
  // A text-format escape in a quote does not close it.
  ASSERT_OK(apply_overrides(c, R"(name="a\"b,c",epochs=3)"));
  EXPECT_EQ(c.name(), "a\"b,c");
  EXPECT_EQ(c.epochs(), 3);
  expect_error(apply_overrides(c, "lr=0.5,momentum"), absl::StatusCode::kInvalidArgument,
               {"--set", "expected field=value", "momentum"});
  expect_error(apply_overrides(c, "epochs=1,batchsize=8"), absl::StatusCode::kInvalidArgument,
               {"--set", "'batchsize'"});
  expect_error(apply_overrides(c, "depth=8"), absl::StatusCode::kInvalidArgument, {"--set", "ambiguous"});
}

TEST(ConfigTest, ConfiguredLrIsTheChosenOptimizers) {
  TaskConfig c;
  EXPECT_EQ(configured_lr(c), 0.1);  // SGD's default when none is chosen
  c.mutable_sgd()->set_lr(0.4);
  EXPECT_EQ(configured_lr(c), 0.4);
}

TEST(ConfigTest, ValidationListsEveryProblem) {
  TaskConfig c;
  ASSERT_OK(validate_config(c));
  c.set_epochs(0);
  c.mutable_sgd()->set_nesterov(true);
  c.set_resume(true);
  c.set_num_workers(20000);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument,
               {"epochs = 0", "nesterov", "needs momentum", "resume", "needs checkpoint_dir",
                "num_workers = 20000 (must be in [0, 1024])"});
}

// Values that would never act, or act as nonsense, without a word.
TEST(ConfigTest, ValidationRejectsNonFiniteTargetsAndDecayAndMilestonesBeforeEpochOne) {
  TaskConfig c;
  c.set_target_value(std::nan(""));
  c.add_more_targets()->set_metric("top5_accuracy");
  c.mutable_more_targets(0)->set_value(std::numeric_limits<double>::infinity());
  c.mutable_sgd()->set_weight_decay(std::numeric_limits<double>::infinity());
  c.set_lr_schedule(TaskConfig::MULTISTEP);
  c.add_lr_milestones(0);
  c.add_lr_milestones(3);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument,
               {"target_value = nan (must be finite)", "more_targets[0].value = inf (must be finite)",
                "sgd.weight_decay = inf", "lr_milestones = 0,3 (must be epochs >= 1)"});
}

// Adam is chosen in the optimizer oneof; the short names and flags (lr,
// weight_decay) then set its fields, and its settings are validated.
TEST(ConfigTest, AdamIsChosenSetAndValidated) {
  ASSERT_OK_AND_ASSIGN(TaskConfig c,
                       parse_config("adam { lr: 0.01 decoupled_weight_decay: true }\n", "adam.textproto"));
  ASSERT_TRUE(c.has_adam());
  EXPECT_EQ(configured_lr(c), 0.01);
  ASSERT_OK(set_config_field(c, "lr", "0.002"));
  ASSERT_OK(set_config_field(c, "weight_decay", "0.05"));
  ASSERT_OK(set_config_field(c, "beta2", "0.98"));
  EXPECT_EQ(c.adam().lr(), 0.002);
  EXPECT_EQ(c.adam().weight_decay(), 0.05);
  EXPECT_EQ(c.adam().beta2(), 0.98);
  EXPECT_EQ(c.adam().eps(), 1e-8);  // default
  EXPECT_FALSE(c.has_sgd());
  // A field of the other choice would clear Adam's settings; the whole
  // message switches.
  expect_error(set_config_field(c, "sgd.momentum", "0.9"), absl::StatusCode::kInvalidArgument,
               {"'sgd.momentum'", "chooses 'adam' for 'optimizer'", "sgd={...}"});
  ASSERT_TRUE(c.has_adam());
  EXPECT_EQ(c.adam().lr(), 0.002);
  TaskConfig switched = c;
  ASSERT_OK(set_config_field(switched, "sgd", "{lr: 0.3 momentum: 0.9}"));
  ASSERT_TRUE(switched.has_sgd());
  EXPECT_EQ(switched.sgd().momentum(), 0.9);
  ASSERT_OK(validate_config(c));
  c.mutable_adam()->set_beta1(1);
  c.mutable_adam()->set_eps(-1);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument, {"adam.beta1 = 1", "adam.eps = -1"});
}

TEST(ConfigTest, ValidationAcceptsMixedPrecisionAndTf32AndRejectsNoAccumulation) {
  TaskConfig c;
  c.set_tf32(true);
  ASSERT_OK(validate_config(c));
  for (const TaskConfig::DType dtype : {TaskConfig::F16, TaskConfig::BF16}) {
    c.set_dtype(dtype);
    EXPECT_OK(validate_config(c));
  }
  c.set_dtype(TaskConfig::F32);
  c.set_gradient_accumulation_steps(0);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument, {"gradient_accumulation_steps = 0", ">= 1"});
}

TEST(ConfigTest, ValidationChecksTheSgdSettings) {
  TaskConfig c;
  SgdConfig& sgd = *c.mutable_sgd();
  sgd.set_lr(0.1);
  sgd.set_momentum(0.9);
  sgd.set_nesterov(true);
  sgd.set_weight_decay(5e-4);
  ASSERT_OK(validate_config(c));
  sgd.set_lr(-1);
  sgd.set_momentum(1);
  sgd.set_weight_decay(-1e-4);
  sgd.set_dampening(1.5);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument,
               {"sgd.lr = -1", "sgd.momentum = 1 (must be in [0, 1))", "sgd.weight_decay = -0.0001",
                "sgd.dampening = 1.5", "sgd.nesterov", "dampening 0"});
  sgd.set_lr(std::nan(""));
  sgd.set_momentum(0.9);
  sgd.set_weight_decay(0);
  sgd.set_dampening(0);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument, {"sgd.lr = nan", "finite"});
  sgd.set_lr(0.1);
  sgd.set_momentum(0);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument, {"sgd.nesterov", "momentum > 0"});
  // lr_min is bounded by the configured lr.
  sgd.set_nesterov(false);
  c.set_lr_min(0.2);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument, {"lr_min = 0.2", "[0, lr]"});
  sgd.set_lr(0.4);
  EXPECT_OK(validate_config(c));
}

// A setting that the rest of the config makes meaningless is an error, not
// silently ignored: loss scaling under F32, a data path beside synthetic
// data, checkpoint timing without a folder, momentum that NT-ASGD's switch
// would drop, a fractional warm-up, a per-step warm-up before the plateau
// schedule; and MULTISTEP needs milestones.
TEST(ConfigTest, SettingsThatWouldDoNothingAreErrors) {
  TaskConfig c;
  c.set_lr_schedule(TaskConfig::MULTISTEP);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument,
               {"lr_milestones = [] (MULTISTEP needs at least one)"});
  c.add_lr_milestones(30);
  EXPECT_OK(validate_config(c));

  c.mutable_loss_scaler()->set_initial(1024);
  c.set_reduce_gradients_in_f32(true);
  c.set_data_path("/data/cifar");
  c.set_synthetic(true);
  c.set_checkpoint_interval_minutes(5);
  c.set_warmup_epochs(0.5);
  c.mutable_sgd()->set_momentum(0.9);
  c.mutable_sgd()->set_nt_asgd_nonmono(5);
  expect_error(
      validate_config(c), absl::StatusCode::kInvalidArgument,
      {"loss_scaler = {...} (needs dtype F16 or BF16", "reduce_gradients_in_f32 = true (needs dtype F16",
       "data_path = /data/cifar (not read with synthetic", "checkpoint_interval_minutes = 5 (needs checkpoint_dir",
       "warmup_epochs = 0.5 (must be a whole number", "sgd.momentum = 0.9 (must be 0 with nt_asgd_nonmono"});
  c.set_dtype(TaskConfig::F16);
  c.set_synthetic(false);
  c.set_checkpoint_dir("/tmp/checkpoints");
  c.mutable_sgd()->set_momentum(0);
  // An infinite or huge warm-up was accepted, then cast to an integer.
  for (const double huge : {std::numeric_limits<double>::infinity(), 1e300}) {
    c.set_warmup_epochs(huge);
    expect_error(validate_config(c), absl::StatusCode::kInvalidArgument,
                 {"warmup_epochs = ", "(must be a whole number of epochs in [0, 1e6])"});
  }
  c.set_warmup_epochs(2);
  EXPECT_OK(validate_config(c));

  c.set_lr_schedule(TaskConfig::PLATEAU);
  c.set_lr_warmup_per_step(true);
  c.set_lr_plateau_threshold(-1);
  c.set_eval_every_epochs(2);
  c.set_lr_decay_factor(1);
  expect_error(validate_config(c), absl::StatusCode::kInvalidArgument,
               {"lr_plateau_threshold = -1 (must be finite and >= 0)",
                "lr_warmup_per_step = true (does not go with lr_schedule PLATEAU",
                "eval_every_epochs = 2 (must be 1 with lr_schedule PLATEAU",
                "lr_decay_factor = 1 (must be below 1 with lr_schedule PLATEAU"});
  // The other schedules evaluate when they like, and a factor of 1 is a
  // constant rate.
  c.set_lr_schedule(TaskConfig::STEP);
  c.set_lr_warmup_per_step(false);
  c.set_lr_plateau_threshold(0);
  EXPECT_OK(validate_config(c));
}

TEST(ConfigTest, JsonHasEveryFieldAndSetExtensions) {
  TaskConfig c;
  c.mutable_sgd()->set_lr(0.3);
  c.add_lr_milestones(4);
  Json j = config_to_json(c);
  ASSERT_NE(j.find("sgd"), nullptr);
  EXPECT_EQ(j.find("sgd")->find("lr")->as_double(), 0.3);
  EXPECT_EQ(j.find("sgd")->find("momentum")->as_double(), 0);  // default shown
  EXPECT_EQ(j.find("lr"), nullptr);                            // no longer a field of its own
  EXPECT_EQ(j.find("adam"), nullptr);                          // the optimizer not chosen
  EXPECT_EQ(j.find("batch_size")->as_int(), 32);               // default shown
  EXPECT_EQ(j.find("lr_schedule")->as_string(), "CONSTANT");
  EXPECT_EQ(j.find("lr_milestones")->as_array().size(), 1u);
  EXPECT_EQ(j.find("[ts.tasks.testing.toy]"), nullptr);
  c.MutableExtension(testing::toy)->set_depth(8);
  j = config_to_json(c);
  ASSERT_NE(j.find("[ts.tasks.testing.toy]"), nullptr);
  EXPECT_EQ(j.find("[ts.tasks.testing.toy]")->find("depth")->as_int(), 8);
  EXPECT_EQ(j.find("[ts.tasks.testing.toy]")->find("variant")->as_string(), "basic");
  EXPECT_EQ(j.find("[ts.tasks.testing.toy]")->find("dataset")->as_string(), "FASHION_MNIST");
  // A config that chooses no optimizer trains with SGD's defaults, and its
  // JSON says so (it had neither sgd nor adam, and no lr anywhere).
  j = config_to_json(TaskConfig());
  ASSERT_NE(j.find("sgd"), nullptr);
  EXPECT_EQ(j.find("sgd")->find("lr")->as_double(), SgdConfig().lr());
  EXPECT_EQ(j.find("adam"), nullptr);
}

}  // namespace
}  // namespace ts::tasks
