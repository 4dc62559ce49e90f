// The Trainer on a toy recipe (a line y = 3x + 1 fitted by SGD with a
// linear layer, a dropout mask from the tensor generator on its input, and
// shuffled batches): a run that crashes after a timed mid-epoch checkpoint,
// or stops at max_steps, resumes to bit-identical parameters, losses and loss
// curve; NT-ASGD and the PLATEAU lr schedule follow the evaluated loss and
// resume; gradient accumulation over k micro-batches equals one batch k times
// as large; gradient clipping and the recipe's per-step lr factor shape the
// steps; the report and TensorBoard files hold what the run did, its
// scaling efficiency against a baseline report and its price; the log has no
// terminal escapes; errors name the step, the checkpoint, the field or the
// baseline file.
#include "tasks/common/trainer.h"

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "autograd/ops.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "gtest/gtest.h"
#include "nn/dropout.h"
#include "nn/linear.h"
#include "nn/losses.h"
#include "tasks/common/event.pb.h"
#include "tasks/common/run_state_file.h"
#include "tasks/common/tfrecord.h"
#include "tensor/ops.h"
#include "tensor/precision.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

constexpr int kPoints = 40;
constexpr int kBatch = 4;

// Example i: {x [1], y [1]} with x in [-1, 1) and y = 3x + 1 (f64).
class LineData final : public data::Dataset {
 public:
  explicit LineData(int64_t points = kPoints) : points_(points) {}
  int64_t size() const override { return points_; }
  absl::StatusOr<data::Example> get(int64_t i) const override {
    const double x = 2.0 * static_cast<double>(i) / static_cast<double>(points_) - 1;
    data::Example e;
    e.fields.push_back(from_vector<double>({x}, {1}));
    e.fields.push_back(from_vector<double>({3 * x + 1}, {1}));
    return e;
  }

 private:
  int64_t points_;
};

// y = w * dropout(x) + b; evaluation reports "loss" (the mean squared error)
// and "accuracy" (the share of points within 0.05).
class LineRecipe final : public Recipe {
 public:
  // Builds its layers from the default generator: seed it first, as
  // run_task does.
  explicit LineRecipe(double dropout = 0) {
    linear_ = std::make_shared<nn::Linear>(1, 1);
    linear_->to(DType::kF64);
    dropout_ = std::make_shared<nn::Dropout>(dropout);
    data_.train = std::make_shared<LineData>();
    data_.eval = std::make_shared<LineData>();
    data_.description = "a line";
    data_.statistics = [this] {
      Json stats = Json::object();
      stats["steps_run"] = steps_run;
      return stats;
    };
  }

  const TrainingData& data() const override { return no_data ? empty_ : data_; }
  std::shared_ptr<nn::Module> model() const override { return linear_; }
  autograd::Variable loss(absl::Span<const Tensor> batch) override {
    if (before_step) before_step();
    if (steps_run == fail_at_step) throw_error(absl::StatusCode::kAborted, "simulated crash");
    ++steps_run;
    const autograd::Variable loss =
        nn::mse_loss(linear_->forward((*dropout_).forward(autograd::Variable(batch[0]))), autograd::Variable(batch[1]));
    if (nan_at_step == steps_run - 1) return loss * std::numeric_limits<double>::quiet_NaN();
    losses.push_back(item<double>(loss.data()));
    return loss;
  }
  double lr_factor(absl::Span<const Tensor>) const override { return lr_factor_value; }
  EvalSums evaluate(absl::Span<const Tensor> batch) override {
    const Tensor err = linear_->forward(autograd::Variable(batch[0])).data() - batch[1];
    return {{"squared_error", sum(err * err)},
            {"close", sum(lt(abs(err), 0.05))},
            {"samples", scalar_tensor(batch[0].size(0), {DType::kF64})}};
  }
  Metrics metrics(const std::map<std::string, double>& sums) const override {
    return {{"loss", sums.at("squared_error") / sums.at("samples")},
            {"accuracy", sums.at("close") / sums.at("samples")}};
  }

  // Trains on `points` points of the line instead of kPoints.
  void train_on(int64_t points) { data_.train = std::make_shared<LineData>(points); }

  std::vector<double> parameters() const {
    return {item<double>(linear_->named_parameters()[0].second.data()),
            item<double>(linear_->named_parameters()[1].second.data())};
  }

  std::vector<double> losses;  // of every step this recipe ran
  int64_t steps_run = 0;
  int64_t fail_at_step = -1;  // this recipe's step at which loss() throws
  int64_t nan_at_step = -1;   // ... at which its loss is NaN
  double lr_factor_value = 1;
  bool no_data = false;               // data() gives neither datasets nor batch sources
  std::function<void()> before_step;  // called as each step starts

 private:
  TrainingData data_, empty_;
  std::shared_ptr<nn::Linear> linear_;
  std::shared_ptr<nn::Dropout> dropout_;
};

// Each call advances 0.5 s, so timed checkpoints come every few steps.
struct FakeClock {
  double t = 0;
  double operator()() { return t += 0.5; }
};

absl::StatusOr<Json> read_report(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, read_file(path));
  return parse_json(text);
}

// The records of the run's TensorBoard event files (one per session), in
// the order the sessions wrote them (their names start with the time).
absl::StatusOr<std::vector<std::string>> event_records(const TaskConfig& c) {
  const std::string tb = join_path(c.output_dir(), "tensorboard");
  DIR* d = opendir(tb.c_str());
  if (d == nullptr) return absl::NotFoundError(tb);
  std::vector<std::string> files;
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name).find("tfevents") != std::string::npos) files.push_back(join_path(tb, e->d_name));
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  std::vector<std::string> records;
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(std::string bytes, read_file(file));
    ASSIGN_OR_RETURN(std::vector<std::string> in_file, read_tfrecords(bytes, file));
    records.insert(records.end(), in_file.begin(), in_file.end());
  }
  return records;
}

// Each epoch's evaluated loss and lr, from a report.
struct EpochSeries {
  std::vector<double> losses, lrs;
};
EpochSeries epoch_series(const Json& report) {
  EpochSeries series;
  for (const Json& epoch : report.find("epochs")->as_array()) {
    series.losses.push_back(epoch.find("eval")->find("loss")->as_double());
    series.lrs.push_back(epoch.find("lr")->as_double());
  }
  return series;
}

std::vector<double> numbers(const Json& array) {
  std::vector<double> values;
  for (const Json& v : array.as_array()) values.push_back(v.as_double());
  return values;
}

class TrainerTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kSeed = 1234;

  // The recipe as run_task makes it: from the seeded generator.
  static std::unique_ptr<LineRecipe> recipe(double dropout = 0) {
    manual_seed(kSeed);
    return std::make_unique<LineRecipe>(dropout);
  }

  TaskConfig config(const std::string& name) {
    TaskConfig c;
    c.set_name(name);
    c.set_seed(kSeed);
    c.set_epochs(4);
    c.set_batch_size(kBatch);
    c.mutable_sgd()->set_lr(0.2);
    c.set_target_metric("accuracy");
    c.set_target_value(0.9);
    c.set_device("cpu");
    c.set_num_workers(0);
    c.set_warmup_steps(2);
    const std::string root = join_path(::testing::TempDir(), name);
    c.set_output_dir(join_path(root, "out"));
    c.set_checkpoint_dir(join_path(root, "ckpt"));
    c.set_checkpoint_interval_minutes(0.1);  // 6 s of fake time
    return c;
  }

  TrainerOptions options() {
    TrainerOptions o;
    o.clock = FakeClock{};
    o.progress_out = out_;
    o.terminal = false;
    return o;
  }

  std::unique_ptr<Trainer> trainer(const TaskConfig& c, Recipe& recipe, TrainerOptions o) {
    auto t = Trainer::create(c, Device::cpu(), recipe, std::move(o));
    EXPECT_TRUE(t.ok()) << t.status();
    return std::move(t).value();
  }
  std::unique_ptr<Trainer> trainer(const TaskConfig& c, Recipe& recipe) { return trainer(c, recipe, options()); }

  std::string log() {
    std::fflush(out_);
    std::rewind(out_);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, out_)) > 0) text.append(buf, n);
    return text;
  }

  void TearDown() override { std::fclose(out_); }
  std::FILE* out_ = std::tmpfile();
};

TEST_F(TrainerTest, CrashAfterTimedCheckpointResumesBitIdentically) {
  // Dropout draws a mask per step from the generator: a resume that restored
  // its stream wrongly would change the losses.
  auto reference = recipe(/*dropout=*/0.1);
  ASSERT_OK_AND_ASSIGN(RunSummary full, trainer(config("reference"), *reference)->run());
  ASSERT_EQ(reference->losses.size(), 40u);
  // It learns: the evaluated (dropout-free) error falls far below the first
  // steps' losses.
  EXPECT_LT(full.last_metrics.at("loss"), 0.1 * reference->losses.front()) << reference->losses.front();

  TaskConfig c = config("crash");
  {
    auto crashing = recipe(/*dropout=*/0.1);
    crashing->fail_at_step = 28;  // the 29th step: epoch 3, step 9
    expect_error(trainer(c, *crashing)->run().status(), absl::StatusCode::kAborted,
                 {"train step (epoch 3, step 9 of 10)", "simulated crash"});
  }
  ASSERT_OK_AND_ASSIGN(RunCheckpoint saved, load_run_state(join_path(c.checkpoint_dir(), "run_state.ckpt")));
  ASSERT_EQ(saved.state.epoch(), 2);  // a timed checkpoint inside epoch 3, not an epoch-end one
  ASSERT_GT(saved.state.step_in_epoch(), 0);
  ASSERT_LT(saved.state.step_in_epoch(), 8);

  c.set_resume(true);
  auto resumed = recipe(/*dropout=*/0.1);
  auto t = trainer(c, *resumed);
  ASSERT_OK_AND_ASSIGN(RunSummary summary, t->run());
  EXPECT_TRUE(summary.resumed);
  EXPECT_EQ(summary.global_step, 40);
  EXPECT_EQ(summary.epochs_completed, 4);
  EXPECT_EQ(resumed->parameters(), reference->parameters());  // bit-identical
  const std::vector<double> tail(reference->losses.begin() + saved.state.global_step(), reference->losses.end());
  EXPECT_EQ(resumed->losses, tail);

  // The resumed report covers the whole run, its loss curve that of the
  // uninterrupted run but for the run seconds.
  ASSERT_OK_AND_ASSIGN(Json report, read_report(t->report_path()));
  EXPECT_EQ(report.find("epochs")->as_array().size(), 4u);
  EXPECT_TRUE(report.find("run")->find("resumed")->as_bool());
  ASSERT_OK_AND_ASSIGN(Json uninterrupted, read_report(join_path(config("reference").output_dir(), "report.json")));
  const Json& curve = *report.find("curves")->find("train_loss");
  const Json& reference_curve = *uninterrupted.find("curves")->find("train_loss");
  EXPECT_EQ(*curve.find("step"), *reference_curve.find("step"));
  EXPECT_EQ(numbers(*curve.find("value")), reference->losses);
  const std::vector<double> seconds = numbers(*curve.find("seconds"));
  ASSERT_EQ(seconds.size(), 40u);
  EXPECT_TRUE(std::is_sorted(seconds.begin(), seconds.end())) << "run seconds go on across sessions";
}

// NT-ASGD: the run switches to averaged SGD after the first evaluation whose
// loss is worse than the best of all but the last `nonmono` before it (the
// report says when), evaluates the averages from then on, keeps the lr the
// schedule gives the epoch after the switch (as MLBench) while the schedule
// would go on decaying it, and a run that crashes after the switch resumes
// it bit for bit.
TEST_F(TrainerTest, NtAsgdSwitchesWhenTheLossStopsImprovingAndResumes) {
  const auto nt_config = [&](const std::string& name) {
    TaskConfig c = config(name);
    c.set_epochs(8);
    c.mutable_sgd()->set_lr(0.6);
    c.mutable_sgd()->set_nt_asgd_nonmono(1);
    c.set_lr_schedule(TaskConfig::STEP);
    c.set_lr_step_epochs(1);
    c.set_lr_decay_factor(0.9);
    return c;
  };
  auto reference = recipe(/*dropout=*/0.5);
  auto t = trainer(nt_config("nt_asgd"), *reference);
  ASSERT_OK(t->run().status());
  ASSERT_OK_AND_ASSIGN(Json report, read_report(t->report_path()));
  const auto [losses, lrs] = epoch_series(report);
  // The rule, replayed on the report's losses (those up to the switch come
  // from the trained parameters).
  int64_t want = 0;
  for (size_t e = 2; e < losses.size() && want == 0; ++e) {
    if (losses[e] > *std::min_element(losses.begin(), losses.begin() + e - 1)) want = static_cast<int64_t>(e) + 1;
  }
  ASSERT_GT(want, 0) << "the loss never stopped improving; the test needs a run that switches";
  ASSERT_LT(want, 8) << "the switch must leave an epoch to crash in";
  ASSERT_NE(report.find("extra")->find("nt_asgd"), nullptr);
  EXPECT_EQ(report.find("extra")->find("nt_asgd")->find("switch_epoch")->as_int(), want);
  EXPECT_NE(log().find("switching to averaged SGD"), std::string::npos);
  for (int64_t e = 1; e < want; ++e) EXPECT_LT(lrs[e], lrs[e - 1]) << "epoch " << e + 1;
  for (size_t e = want; e < lrs.size(); ++e) EXPECT_DOUBLE_EQ(lrs[e], lrs[want - 1] * 0.9) << "epoch " << e + 1;
  // After the switch evaluation reads the averages, and the trained
  // parameters come back after it: the last evaluated loss is not the loss
  // of the parameters the run ends with.
  const std::vector<double> wb = reference->parameters();
  double trained_loss = 0;
  for (int i = 0; i < kPoints; ++i) {
    const double x = 2.0 * i / kPoints - 1, err = wb[0] * x + wb[1] - (3 * x + 1);
    trained_loss += err * err / kPoints;
  }
  EXPECT_GT(std::abs(losses.back() - trained_loss), 1e-9 * trained_loss) << losses.back();

  TaskConfig c = nt_config("nt_asgd_crash");
  c.set_checkpoint_interval_minutes(0);  // epoch ends only
  {
    auto crashing = recipe(/*dropout=*/0.5);
    crashing->fail_at_step = 10 * want + 3;  // inside the epoch after the switch (10 steps each)
    EXPECT_FALSE(trainer(c, *crashing)->run().ok());
  }
  ASSERT_OK_AND_ASSIGN(RunCheckpoint saved, load_run_state(join_path(c.checkpoint_dir(), "run_state.ckpt")));
  EXPECT_EQ(saved.state.asgd_switch_epoch(), want);
  c.set_resume(true);
  auto resumed = recipe(/*dropout=*/0.5);
  const auto resumed_trainer = trainer(c, *resumed);
  ASSERT_OK(resumed_trainer->run().status());
  EXPECT_EQ(resumed->parameters(), reference->parameters());
  ASSERT_OK_AND_ASSIGN(Json resumed_report, read_report(resumed_trainer->report_path()));
  EXPECT_TRUE(resumed_report.find("run")->find("stopped_by_signal")->is_null());  // bit-identical
}

// The PLATEAU schedule (logreg's default and MLBench ResNet-20's) through the
// trainer: each epoch's lr in the report is what ReduceLROnPlateau's rule
// gives on the evaluated losses before it, and a run that crashes in the
// epoch after a reduction resumes the schedule's state bit for bit.
TEST_F(TrainerTest, PlateauLrFollowsTheEvaluatedLossAndResumes) {
  constexpr double kLr = 0.6, kThreshold = 0.05;
  const auto plateau_config = [&](const std::string& name) {
    TaskConfig c = config(name);
    c.set_epochs(8);
    c.mutable_sgd()->set_lr(kLr);
    c.set_lr_schedule(TaskConfig::PLATEAU);
    c.set_lr_patience(0);
    c.set_lr_decay_factor(0.5);
    c.set_lr_plateau_threshold(kThreshold);
    return c;
  };
  auto reference = recipe(/*dropout=*/0.5);
  auto t = trainer(plateau_config("plateau"), *reference);
  ASSERT_OK(t->run().status());
  ASSERT_OK_AND_ASSIGN(Json report, read_report(t->report_path()));
  const auto [losses, lrs] = epoch_series(report);
  ASSERT_EQ(lrs.size(), 8u);
  // The rule replayed: patience 0, so every evaluation that does not beat the
  // best by 5% halves the lr of the epochs after it.
  double lr = kLr, best = std::numeric_limits<double>::infinity();
  int first_reduced_epoch = 0;  // 0-based
  for (size_t e = 0; e < lrs.size(); ++e) {
    EXPECT_EQ(lrs[e], lr) << "epoch " << e + 1;
    if (losses[e] < best * (1 - kThreshold)) {
      best = losses[e];
    } else {
      lr *= 0.5;
      if (first_reduced_epoch == 0) first_reduced_epoch = static_cast<int>(e) + 1;
    }
  }
  ASSERT_GT(first_reduced_epoch, 0) << "the loss always improved; the test needs a run that reduces the lr";
  ASSERT_LT(first_reduced_epoch, 8) << "the reduction must leave an epoch to crash in";

  TaskConfig c = plateau_config("plateau_crash");
  c.set_checkpoint_interval_minutes(0);  // epoch ends only
  {
    auto crashing = recipe(/*dropout=*/0.5);
    crashing->fail_at_step = 10 * first_reduced_epoch + 3;  // inside the first epoch at the reduced lr
    EXPECT_FALSE(trainer(c, *crashing)->run().ok());
  }
  ASSERT_OK_AND_ASSIGN(RunCheckpoint saved, load_run_state(join_path(c.checkpoint_dir(), "run_state.ckpt")));
  EXPECT_EQ(saved.state.epoch(), first_reduced_epoch);  // saved after the evaluation that reduced the lr
  c.set_resume(true);
  auto resumed = recipe(/*dropout=*/0.5);
  const auto resumed_trainer = trainer(c, *resumed);
  ASSERT_OK(resumed_trainer->run().status());
  EXPECT_EQ(resumed->parameters(), reference->parameters());  // bit-identical
  ASSERT_OK_AND_ASSIGN(Json resumed_report, read_report(resumed_trainer->report_path()));
  EXPECT_EQ(epoch_series(resumed_report).lrs, lrs);
}

TEST_F(TrainerTest, MaxStepsStopsAndResumeFinishes) {
  auto reference = recipe();
  ASSERT_OK(trainer(config("reference2"), *reference)->run().status());
  TaskConfig c = config("maxsteps");
  c.set_checkpoint_interval_minutes(0);  // epoch ends and the stop only
  c.set_max_steps(13);
  {
    auto first = recipe();
    ASSERT_OK_AND_ASSIGN(RunSummary s, trainer(c, *first)->run());
    EXPECT_EQ(s.global_step, 13);
    EXPECT_EQ(s.epochs_completed, 1);
  }
  c.set_max_steps(0);
  c.set_resume(true);
  auto resumed = recipe();
  const auto resumed_trainer = trainer(c, *resumed);
  ASSERT_OK(resumed_trainer->run().status());
  EXPECT_EQ(resumed->parameters(), reference->parameters());
  ASSERT_OK_AND_ASSIGN(Json resumed_report, read_report(resumed_trainer->report_path()));
  EXPECT_TRUE(resumed_report.find("run")->find("stopped_by_signal")->is_null());
}

// A checkpoint's time-to-target states belong to the targets it was written
// with: resumed with another target, the old target's "reached" (and time)
// would have stood for the new one.
TEST_F(TrainerTest, AResumeWithOtherTargetsIsRefused) {
  TaskConfig c = config("targets");
  c.set_checkpoint_interval_minutes(0);  // epoch ends and the stop only
  c.set_max_steps(13);
  c.set_target_value(0.5);
  TaskConfig::Target* loss = c.add_more_targets();
  loss->set_metric("loss");
  loss->set_value(0.01);
  loss->set_minimize(true);
  {
    auto first = recipe();
    ASSERT_OK(trainer(c, *first)->run().status());
  }
  c.set_max_steps(0);
  c.set_resume(true);
  TaskConfig higher = c;
  higher.set_target_value(0.99);
  TaskConfig other_metric = c;
  other_metric.mutable_more_targets(0)->set_metric("error");
  TaskConfig fewer = c;
  fewer.clear_more_targets();
  for (const auto& [other, message] :
       {std::pair<TaskConfig, std::string>{higher,
                                           "the checkpoint times accuracy >= 0.5 and this run's target_metric is "
                                           "accuracy >= 0.99; a run resumes with the targets it was written with"},
        {other_metric, "the checkpoint times loss <= 0.01 and this run's more_targets[0] is error <= 0.01"},
        {fewer, "the checkpoint times 1 more_targets and this run has 0"}}) {
    auto resumed = recipe();
    expect_error(trainer(other, *resumed)->run().status(), absl::StatusCode::kFailedPrecondition, {message});
  }
  auto resumed = recipe();
  ASSERT_OK(trainer(c, *resumed)->run().status());
}

// max_steps that ends an epoch off the evaluation schedule does not
// evaluate there: the evaluation would move NT-ASGD (and the targets), and
// the resumed run would part from the uninterrupted one.
TEST_F(TrainerTest, MaxStepsAtAnEpochEndOffTheEvaluationScheduleResumesBitExactly) {
  const auto every_other_epoch = [&](const std::string& name) {
    TaskConfig c = config(name);
    c.set_epochs(8);
    c.set_eval_every_epochs(2);
    c.mutable_sgd()->set_lr(0.6);
    c.mutable_sgd()->set_nt_asgd_nonmono(1);
    c.set_checkpoint_interval_minutes(0);  // epoch ends and the stop only
    return c;
  };
  auto reference = recipe(/*dropout=*/0.5);
  ASSERT_OK(trainer(every_other_epoch("off_schedule_reference"), *reference)->run().status());
  TaskConfig c = every_other_epoch("off_schedule");
  c.set_max_steps(kPoints / kBatch);  // the end of epoch 1, which is not evaluated
  {
    auto first = recipe(/*dropout=*/0.5);
    const auto t = trainer(c, *first);
    ASSERT_OK_AND_ASSIGN(RunSummary s, t->run());
    EXPECT_EQ(s.epochs_completed, 1);
    EXPECT_TRUE(s.last_metrics.empty()) << "epoch 1 is off the schedule";
  }
  c.set_max_steps(0);
  c.set_resume(true);
  auto resumed = recipe(/*dropout=*/0.5);
  ASSERT_OK(trainer(c, *resumed)->run().status());
  EXPECT_EQ(resumed->parameters(), reference->parameters());
}

// A stop signal (SIGTERM from a scheduler) after step 13: the run saves a
// checkpoint and its report and says how to resume; the resumed run ends
// with the uninterrupted run's parameters.
TEST_F(TrainerTest, AStopSignalCheckpointsAndResumeFinishes) {
  auto reference = recipe();
  ASSERT_OK(trainer(config("reference_stop"), *reference)->run().status());
  TaskConfig c = config("stopped");
  c.set_checkpoint_interval_minutes(0);  // epoch ends and the stop only
  {
    auto first = recipe();
    TrainerOptions o = options();
    int steps = 0;
    o.stop_signal = [&steps] { return ++steps == 13 ? SIGTERM : 0; };
    auto t = trainer(c, *first, std::move(o));
    expect_error(t->run().status(), absl::StatusCode::kCancelled,
                 {"stopped by signal 15", "after step 3 of epoch 2 (global step 13)", "--resume continues it from",
                  "stopped/ckpt/run_state.ckpt"});
    EXPECT_EQ(first->losses.size(), 13u);
    ASSERT_OK_AND_ASSIGN(RunCheckpoint saved, load_run_state(join_path(c.checkpoint_dir(), "run_state.ckpt")));
    EXPECT_EQ(saved.state.global_step(), 13);
    ASSERT_OK_AND_ASSIGN(Json report, read_report(t->report_path()));
    EXPECT_EQ(report.find("run")->find("global_step")->as_int(), 13);
    // Kept in the report too: under mpirun a Ctrl-C can cost the ranks' last line.
    EXPECT_EQ(report.find("run")->find("stopped_by_signal")->as_string(), strsignal(SIGTERM));
  }
  // A write killed mid-way (a second signal) left its temporary file; the
  // next session removes it.
  const std::string leftover = join_path(c.checkpoint_dir(), "run_state.ckpt.tmp.Ab12Cd");
  ASSERT_OK(write_file_atomically(leftover, "partial"));
  c.set_resume(true);
  auto resumed = recipe();
  const auto resumed_trainer = trainer(c, *resumed);
  ASSERT_OK(resumed_trainer->run().status());
  EXPECT_EQ(resumed->parameters(), reference->parameters());
  ASSERT_OK_AND_ASSIGN(Json resumed_report, read_report(resumed_trainer->report_path()));
  EXPECT_TRUE(resumed_report.find("run")->find("stopped_by_signal")->is_null());
  EXPECT_TRUE(absl::IsNotFound(read_file(leftover).status()));
  // The resumed session starts at step 14 for TensorBoard, which drops
  // anything the first wrote from there on.
  ASSERT_OK_AND_ASSIGN(auto records, event_records(c));
  std::vector<int64_t> starts;
  for (const std::string& record : records) {
    tensorboard::Event e;
    ASSERT_TRUE(e.ParseFromString(record));
    if (e.session_log().status() == tensorboard::SessionLog::START) starts.push_back(e.step());
  }
  EXPECT_EQ(starts, std::vector<int64_t>{14});
  // Without a checkpoint_dir there is nothing to resume, and it says so.
  TaskConfig bare = config("stopped_bare");
  bare.clear_checkpoint_dir();
  bare.clear_checkpoint_interval_minutes();
  auto line = recipe();
  TrainerOptions o = options();
  o.stop_signal = [] { return SIGINT; };
  expect_error(trainer(bare, *line, std::move(o))->run().status(), absl::StatusCode::kCancelled,
               {"stopped by signal 2", "after step 1 of epoch 1", "without a checkpoint_dir nothing can resume it"});
}

TEST_F(TrainerTest, AccumulatingMicroBatchesEqualsOneLargerBatch) {
  // Without dropout the only difference is how the batch is cut: the
  // epoch's order depends on the seed alone, so k micro-batches of b are the
  // batch of k*b, and the mean of their means is its mean.
  TaskConfig large = config("large");
  large.set_batch_size(2 * kBatch);
  large.set_checkpoint_dir("");  // no checkpoints
  large.clear_checkpoint_interval_minutes();
  auto one = recipe();
  ASSERT_OK_AND_ASSIGN(RunSummary a, trainer(large, *one)->run());

  TaskConfig micro = config("micro");
  micro.set_gradient_accumulation_steps(2);
  micro.set_checkpoint_dir("");  // no checkpoints
  micro.clear_checkpoint_interval_minutes();
  auto accumulated = recipe();
  ASSERT_OK_AND_ASSIGN(RunSummary b, trainer(micro, *accumulated)->run());

  EXPECT_EQ(a.global_step, 20);
  EXPECT_EQ(b.global_step, 20);  // optimizer steps, not micro-batches
  const std::vector<double> pa = one->parameters(), pb = accumulated->parameters();
  EXPECT_NEAR(pa[0], pb[0], 1e-12);
  EXPECT_NEAR(pa[1], pb[1], 1e-12);
  EXPECT_NEAR(a.last_loss, b.last_loss, 1e-12);
}

// stop_at_target ends the run at the evaluation that reaches the target,
// as MLBench's benchmarks do; a resume of the finished run trains no more.
TEST_F(TrainerTest, StopAtTargetEndsTheRunAtItsGoal) {
  TaskConfig c = config("stop_at_target");
  c.set_epochs(20);
  c.set_stop_at_target(true);
  auto line = recipe();
  auto t = trainer(c, *line);
  ASSERT_OK_AND_ASSIGN(RunSummary summary, t->run());
  EXPECT_TRUE(summary.target_reached);
  ASSERT_OK_AND_ASSIGN(Json j, read_report(t->report_path()));
  const int64_t target_epoch = j.find("time_to_target")->find("epoch")->as_int();
  ASSERT_LT(target_epoch, 20) << "the test needs a run that reaches its target early";
  EXPECT_EQ(summary.epochs_completed, target_epoch);
  EXPECT_EQ(j.find("epochs")->as_array().size(), static_cast<size_t>(target_epoch));
  EXPECT_NE(log().find("reached its target; stopping"), std::string::npos);
  c.set_resume(true);
  auto resumed = recipe();
  ASSERT_OK_AND_ASSIGN(RunSummary again, trainer(c, *resumed)->run());
  EXPECT_EQ(again.global_step, summary.global_step);
}

TEST_F(TrainerTest, ReportAndEventsHoldTheRun) {
  TaskConfig c = config("report");
  c.set_eval_every_epochs(3);  // evaluates after epochs 3 and 4 (the last)
  // Timed beside the target: a loss to go below (reached), and an accuracy
  // no fit reaches.
  TaskConfig::Target* low_loss = c.add_more_targets();
  low_loss->set_metric("loss");
  low_loss->set_value(0.5);
  low_loss->set_minimize(true);
  TaskConfig::Target* perfect = c.add_more_targets();
  perfect->set_metric("accuracy");
  perfect->set_value(1.5);
  auto line = recipe();
  auto t = trainer(c, *line);
  ASSERT_OK_AND_ASSIGN(RunSummary summary, t->run());
  EXPECT_TRUE(summary.target_reached);

  ASSERT_OK_AND_ASSIGN(std::string text, read_file(t->report_path()));
  ASSERT_OK_AND_ASSIGN(Json j, parse_json(text));
  EXPECT_EQ(j.find("config")->find("sgd")->find("lr")->as_double(), 0.2);
  EXPECT_EQ(j.find("environment")->find("device")->as_string(), "cpu");
  EXPECT_EQ(j.find("world")->find("size")->as_int(), 1);
  EXPECT_EQ(j.find("data")->as_string(), "a line");
  // What the data reports of itself, as it stands at the end.
  EXPECT_EQ(j.find("extra")->find("data")->find("steps_run")->as_int(), 40);
  const auto& epochs = j.find("epochs")->as_array();
  ASSERT_EQ(epochs.size(), 4u);
  EXPECT_TRUE(epochs[0].find("eval")->as_object().empty());
  EXPECT_EQ(epochs[2].find("eval")->find("accuracy")->type(), Json::Type::kDouble);
  EXPECT_EQ(epochs[3].find("steps")->as_int(), 10);
  EXPECT_EQ(epochs[3].find("lr")->as_double(), 0.2);
  // Mean of the epoch's step losses (equal batch sizes).
  double sum = 0;
  for (int i = 30; i < 40; ++i) sum += line->losses[i];
  EXPECT_NEAR(epochs[3].find("train_loss")->as_double(), sum / 10, 1e-12);
  const Json& tp = *j.find("throughput");
  EXPECT_EQ(tp.find("steps")->as_int(), 38);  // 40 minus 2 warm-up steps
  EXPECT_EQ(tp.find("samples")->as_int(), 38 * kBatch);
  for (const char* p : {"p50_s", "p75_s", "p90_s", "p95_s", "samples_per_s"}) {
    EXPECT_GT(tp.find(p)->as_double(), 0) << p;
  }
  EXPECT_EQ(tp.find("global_samples_per_s")->as_double(), tp.find("samples_per_s")->as_double()) << "one rank";
  const Json& ttt = *j.find("time_to_target");
  EXPECT_TRUE(ttt.find("reached")->as_bool());
  EXPECT_EQ(ttt.find("epoch")->as_int(), 3);
  // MLBench's measure, the training steps' time then, leaves evaluations out.
  EXPECT_GT(ttt.find("train_seconds")->as_double(), 0);
  EXPECT_LT(ttt.find("train_seconds")->as_double(), ttt.find("seconds")->as_double());
  const auto& more = j.find("more_targets")->as_array();
  ASSERT_EQ(more.size(), 2u);
  EXPECT_EQ(more[0].find("metric")->as_string(), "loss");
  EXPECT_TRUE(more[0].find("minimize")->as_bool());
  EXPECT_TRUE(more[0].find("reached")->as_bool());
  EXPECT_EQ(more[0].find("epoch")->as_int(), 3);
  EXPECT_FALSE(more[1].find("reached")->as_bool());
  EXPECT_EQ(more[1].find("best")->as_double(), epochs[3].find("eval")->find("accuracy")->as_double());
  EXPECT_EQ(numbers(*tp.find("step_seconds")).size(), 38u);
  const Json& breakdown = *j.find("time_breakdown");
  EXPECT_GT(breakdown.find("step_seconds_total")->as_double(), 0);
  // Without DDP a step is all compute.
  const Json& per_step = *breakdown.find("per_step");
  EXPECT_EQ(per_step.find("step_s")->as_double(), tp.find("mean_s")->as_double());
  EXPECT_EQ(per_step.find("communication_s")->as_double(), 0);
  EXPECT_EQ(per_step.find("compute_s")->as_double(), tp.find("mean_s")->as_double());
  EXPECT_TRUE(j.find("scaling")->is_null()) << "no baseline_report";
  EXPECT_TRUE(j.find("price")->is_null()) << "no price_per_hour";
  // Every step's loss, with its global step and the run time then.
  const Json& curve = *j.find("curves")->find("train_loss");
  std::vector<double> steps(40);
  for (int i = 0; i < 40; ++i) steps[i] = i + 1;
  EXPECT_EQ(numbers(*curve.find("step")), steps);
  EXPECT_EQ(numbers(*curve.find("value")), line->losses);
  const std::vector<double> seconds = numbers(*curve.find("seconds"));
  EXPECT_GT(seconds.front(), 0);
  EXPECT_LT(seconds.back(), j.find("run")->find("elapsed_seconds")->as_double());

  // TensorBoard: the version record, 40 step losses, per epoch loss and lr
  // and throughput, 2 metrics in 2 evaluated epochs.
  ASSERT_OK_AND_ASSIGN(auto records, event_records(c));
  EXPECT_EQ(records.size(), 1u + 40 + 4 * 3 + 2 * 2);
  // Each step's loss at its own time: the events' wall times are as far
  // apart as the curve's run times (they were the time the losses were read
  // in a batch, many steps at once).
  std::vector<double> loss_walls;
  for (const std::string& record : records) {
    tensorboard::Event e;
    ASSERT_TRUE(e.ParseFromString(record));
    if (e.has_summary() && e.summary().value(0).tag() == "train/loss") loss_walls.push_back(e.wall_time());
  }
  ASSERT_EQ(loss_walls.size(), seconds.size());
  for (size_t i = 1; i < seconds.size(); ++i) {
    EXPECT_NEAR(loss_walls[i] - loss_walls[0], seconds[i] - seconds[0], 1e-5) << "step " << i + 1;
  }
}

// What a checkpoint holds the event file holds too, whenever the process
// dies: a resumed session starts TensorBoard's curves after the checkpoint,
// so a loss still in the C library's buffer when the first died (a kill -9,
// an OOM) would be lost for good.
TEST_F(TrainerTest, TheEventFileHoldsEveryStepACheckpointHolds) {
  TaskConfig c = config("events_flushed");
  c.set_epochs(2);
  auto line = recipe();
  const std::string checkpoint = join_path(c.checkpoint_dir(), "run_state.ckpt");
  int checked = 0;
  line->before_step = [&] {
    if (!std::filesystem::exists(checkpoint)) return;
    ASSERT_OK_AND_ASSIGN(RunCheckpoint saved, load_run_state(checkpoint));
    ASSERT_OK_AND_ASSIGN(auto records, event_records(c));
    int64_t last_loss_step = 0;
    for (const std::string& record : records) {
      tensorboard::Event e;
      ASSERT_TRUE(e.ParseFromString(record));
      if (e.has_summary() && e.summary().value(0).tag() == "train/loss") last_loss_step = e.step();
    }
    EXPECT_GE(last_loss_step, saved.state.global_step()) << "step " << line->steps_run + 1;
    ++checked;
  };
  ASSERT_OK(trainer(c, *line)->run().status());
  EXPECT_GT(checked, 10);
}

// The checkpoint keeps the CPU ops' thread count, and a CPU run resumed on
// another says that its bits will not repeat the uninterrupted run's.
TEST_F(TrainerTest, ResumingOnAnotherCpuThreadCountIsSaid) {
  TaskConfig c = config("threads");
  c.set_checkpoint_interval_minutes(0);  // epoch ends only
  c.set_max_steps(10);
  auto first = recipe();
  const auto first_trainer = trainer(c, *first);
  ASSERT_OK(first_trainer->run().status());
  ASSERT_OK_AND_ASSIGN(Json report, read_report(first_trainer->report_path()));
  const int threads = static_cast<int>(report.find("environment")->find("cpu_threads")->as_int());
  EXPECT_GE(threads, 1);
  const std::string path = join_path(c.checkpoint_dir(), "run_state.ckpt");
  ASSERT_OK_AND_ASSIGN(RunCheckpoint saved, load_run_state(path));
  EXPECT_EQ(saved.state.cpu_threads(), threads);
  c.set_resume(true);
  c.set_max_steps(20);
  {
    auto same = recipe();
    ASSERT_OK(trainer(c, *same)->run().status());
    EXPECT_EQ(log().find("CPU threads"), std::string::npos) << log();
  }
  // As if written on one thread more.
  ASSERT_OK_AND_ASSIGN(saved, load_run_state(path));
  RunState state = saved.state;
  state.set_cpu_threads(threads + 1);
  const StateBlobs blobs(saved.blobs.begin(), saved.blobs.end());
  ASSERT_OK(save_run_state(path, state, blobs));
  c.set_max_steps(30);
  auto other = recipe();
  ASSERT_OK(trainer(c, *other)->run().status());
  EXPECT_NE(log().find(absl::StrCat("note: resuming on ", threads, " CPU threads; the checkpoint was written on ",
                                    threads + 1,
                                    ": the run goes on, but its bits will not repeat the uninterrupted "
                                    "run's")),
            std::string::npos)
      << log();
}

TEST_F(TrainerTest, ShownThroughputLeavesOutTheWarmUpAsTheReportDoes) {
  TaskConfig c = config("warmup_throughput");
  c.set_epochs(1);
  c.set_checkpoint_dir("");
  c.clear_checkpoint_interval_minutes();
  TrainerOptions o = options();
  // The first clock readings (the warm-up steps') advance 20 s, later ones
  // 0.5 s: a throughput that counted the warm-up would be far lower.
  o.clock = [calls = 0, t = 0.0]() mutable { return t += ++calls <= 8 ? 20 : 0.5; };
  auto line = recipe();
  auto t = trainer(c, *line, std::move(o));
  ASSERT_OK(t->run().status());
  ASSERT_OK_AND_ASSIGN(Json j, read_report(t->report_path()));
  const double reported = j.find("throughput")->find("samples_per_s")->as_double();
  EXPECT_EQ(j.find("throughput")->find("warmup_steps")->as_int(), 2);
  ASSERT_OK_AND_ASSIGN(auto records, event_records(c));
  double shown = -1;
  for (const std::string& record : records) {
    tensorboard::Event e;
    ASSERT_TRUE(e.ParseFromString(record));
    for (const auto& v : e.summary().value()) {
      if (v.tag() == "throughput/samples_per_s") shown = v.simple_value();
    }
  }
  EXPECT_NEAR(shown, reported, 1e-6 * reported);  // TensorBoard stores a float
}

TEST_F(TrainerTest, ALogFileHasPlainLinesOnly) {
  TaskConfig c = config("log");
  c.set_progress_interval_seconds(2);
  auto line = recipe();
  ASSERT_OK(trainer(c, *line)->run().status());
  const std::string text = log();
  EXPECT_NE(text.find("epoch 1/4  step 1/10"), std::string::npos) << text;
  EXPECT_NE(text.find("epoch 4/4 done"), std::string::npos) << text;
  // The last line says what the run did and where its record is.
  const std::string last_line = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_TRUE(absl::StartsWith(last_line, "done: global step 40, 4 of 4 epochs; accuracy ")) << last_line;
  EXPECT_NE(last_line.find("; report "), std::string::npos) << last_line;
  EXPECT_EQ(text.find('\r'), std::string::npos) << "carriage return in the log";
  EXPECT_EQ(text.find('\033'), std::string::npos) << "terminal escape in the log";
}

TEST_F(TrainerTest, TargetNotReachedIsSaid) {
  TaskConfig c = config("unreached");
  c.set_epochs(1);
  c.set_target_value(1.5);  // accuracy never exceeds 1
  auto line = recipe();
  auto t = trainer(c, *line);
  ASSERT_OK(t->run().status());
  ASSERT_OK_AND_ASSIGN(Json j, read_report(t->report_path()));
  EXPECT_EQ(j.find("time_to_target")->find("seconds")->as_string(), "not reached");
  EXPECT_NE(log().find("; accuracy did not reach 1.5 (best "), std::string::npos) << log();
}

TEST_F(TrainerTest, ScalingEfficiencyAndPriceAgainstABaselineRun) {
  TaskConfig base = config("scaling");
  base.set_output_dir(join_path(::testing::TempDir(), "scaling_baseline"));
  base.set_checkpoint_dir("");  // no checkpoints
  base.clear_checkpoint_interval_minutes();
  auto base_line = recipe();
  auto baseline_trainer = trainer(base, *base_line);
  ASSERT_OK(baseline_trainer->run().status());
  ASSERT_OK_AND_ASSIGN(Json baseline, read_report(baseline_trainer->report_path()));

  // Rank 0 of two (no communicator: it trains on its half of the data), so
  // its throughput and time to target differ from the baseline's.
  TaskConfig c = config("scaling");
  c.set_checkpoint_dir("");  // no checkpoints
  c.clear_checkpoint_interval_minutes();
  c.set_baseline_report(baseline_trainer->report_path());
  c.set_price_per_hour(2.5);
  TrainerOptions o = options();
  o.world_size = 2;
  auto line = recipe();
  auto t = trainer(c, *line, std::move(o));
  ASSERT_OK(t->run().status());
  ASSERT_OK_AND_ASSIGN(Json j, read_report(t->report_path()));

  const double rank_samples_per_s = j.find("throughput")->find("samples_per_s")->as_double();
  const double baseline_samples_per_s = baseline.find("throughput")->find("samples_per_s")->as_double();
  const Json& scaling = *j.find("scaling");
  EXPECT_EQ(scaling.find("baseline_report")->as_string(), baseline_trainer->report_path());
  EXPECT_EQ(scaling.find("baseline_world_size")->as_int(), 1);
  EXPECT_EQ(scaling.find("baseline_samples_per_s")->as_double(), baseline_samples_per_s);
  EXPECT_EQ(scaling.find("world_size")->as_int(), 2);
  EXPECT_DOUBLE_EQ(scaling.find("samples_per_s")->as_double(), 2 * rank_samples_per_s);
  EXPECT_DOUBLE_EQ(scaling.find("efficiency")->as_double(), rank_samples_per_s / baseline_samples_per_s);

  // One node (no communicator to span more) at 2.5 an hour.
  const Json& price = *j.find("price");
  const double hours = j.find("run")->find("elapsed_seconds")->as_double() / 3600;
  const double hours_to_target = j.find("time_to_target")->find("seconds")->as_double() / 3600;
  const double baseline_hours_to_target = baseline.find("time_to_target")->find("seconds")->as_double() / 3600;
  ASSERT_NE(hours_to_target, baseline_hours_to_target);
  EXPECT_EQ(price.find("price_per_hour")->as_double(), 2.5);
  EXPECT_EQ(price.find("nodes")->as_int(), 1);
  EXPECT_DOUBLE_EQ(price.find("node_hours")->as_double(), hours);
  EXPECT_DOUBLE_EQ(price.find("cost_total")->as_double(), hours * 2.5);
  EXPECT_DOUBLE_EQ(price.find("cost_to_target")->as_double(), hours_to_target * 2.5);
  // MLBench's index: the price increase over the performance increase.
  const double price_increase = hours_to_target / baseline_hours_to_target;
  const double speedup = baseline_hours_to_target / hours_to_target;
  EXPECT_DOUBLE_EQ(price.find("index")->as_double(), price_increase / speedup);

  // A baseline of another target or workload is refused before training,
  // naming the field: its times and throughput are not this run's to compare.
  for (const auto& [field, change] : std::vector<std::pair<std::string, std::function<void(TaskConfig&)>>>{
           {"target_value", [](TaskConfig& x) { x.set_target_value(0.8); }},
           {"batch_size", [](TaskConfig& x) { x.set_batch_size(kBatch / 2); }},
           {"dtype", [](TaskConfig& x) { x.set_dtype(TaskConfig::BF16); }}}) {
    TaskConfig other = c;
    change(other);
    auto other_line = recipe();
    expect_error(Trainer::create(other, Device::cpu(), *other_line, options()).status(),
                 absl::StatusCode::kInvalidArgument, {baseline_trainer->report_path(), absl::StrCat("config ", field)});
  }
}

TEST_F(TrainerTest, PriceWithoutTargetOrBaseline) {
  TaskConfig c = config("price_unreached");
  c.set_epochs(1);
  c.set_target_value(1.5);  // accuracy never exceeds 1
  c.set_price_per_hour(4);
  auto line = recipe();
  auto t = trainer(c, *line);
  ASSERT_OK(t->run().status());
  ASSERT_OK_AND_ASSIGN(Json j, read_report(t->report_path()));
  const Json& price = *j.find("price");
  EXPECT_DOUBLE_EQ(price.find("cost_total")->as_double(),
                   j.find("run")->find("elapsed_seconds")->as_double() / 3600 * 4);
  EXPECT_TRUE(price.find("cost_to_target")->is_null());
  EXPECT_TRUE(price.find("index")->is_null());

  c.set_price_per_hour(-1);
  expect_error(Trainer::create(c, Device::cpu(), *line).status(), absl::StatusCode::kInvalidArgument,
               {"price_per_hour = -1"});
}

// The config's switch reaches the process-wide one the CUDA convolutions
// consult, both ways.
TEST_F(TrainerTest, DeterministicSetsTheProcessWideSwitch) {
  TaskConfig c = config("deterministic");
  auto line = recipe();
  c.set_deterministic(true);
  ASSERT_OK(Trainer::create(c, Device::cpu(), *line).status());
  EXPECT_TRUE(deterministic_algorithms());
  c.set_deterministic(false);
  ASSERT_OK(Trainer::create(c, Device::cpu(), *line).status());
  EXPECT_FALSE(deterministic_algorithms());
}

TEST_F(TrainerTest, ABadBaselineIsNamedAtStartUp) {
  const std::string dir = join_path(::testing::TempDir(), "bad_baselines");
  ASSERT_OK(make_dirs(dir));
  TaskConfig good = config("baseline");
  good.set_output_dir(dir);
  good.set_checkpoint_dir("");  // no checkpoints
  good.clear_checkpoint_interval_minutes();
  good.set_epochs(1);
  auto line = recipe();
  auto baseline_trainer = trainer(good, *line);
  ASSERT_OK(baseline_trainer->run().status());
  ASSERT_OK_AND_ASSIGN(Json report, read_report(baseline_trainer->report_path()));

  // Variants of a good report, each with one thing wrong.
  const auto with = [&](const char* section, const char* key, Json value) {
    Json bad = report;
    bad[section][key] = std::move(value);
    return bad.dump();
  };
  struct Case {
    const char* file;
    std::string contents;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"not_json.json", "{\"format\": ", {"not_json.json: not JSON"}},
      {"ddp_bench.json", R"({"format": "trainstack.ddp_bench.v1"})", {"ddp_bench.json: not a task report"}},
      {"other_task.json", with("config", "name", "resnet20"), {"other_task.json", "task 'resnet20', not 'baseline'"}},
      {"four_ranks.json", with("world", "size", 4), {"four_ranks.json", "a run of 4 ranks, not one"}},
      {"no_throughput.json", with("throughput", "samples_per_s", Json()), {"no_throughput.json", "no throughput"}},
  };
  for (const Case& bad : cases) {
    const std::string path = join_path(dir, bad.file);
    ASSERT_OK(write_file_atomically(path, bad.contents));
    TaskConfig c = good;
    c.set_baseline_report(path);
    std::vector<std::string> fragments = bad.fragments;
    fragments.push_back("baseline_report");
    expect_error(Trainer::create(c, Device::cpu(), *line).status(), absl::StatusCode::kInvalidArgument, fragments);
  }
  TaskConfig missing = good;
  missing.set_baseline_report(join_path(dir, "missing.json"));
  expect_error(Trainer::create(missing, Device::cpu(), *line).status(), absl::StatusCode::kNotFound,
               {"baseline_report", "missing.json"});
}

TEST_F(TrainerTest, ANonFiniteLossNamesItsStep) {
  TaskConfig c = config("nan");
  c.set_checkpoint_dir("");  // no checkpoints
  c.clear_checkpoint_interval_minutes();
  auto line = recipe();
  line->nan_at_step = 14;
  expect_error(trainer(c, *line)->run().status(), absl::StatusCode::kInternal, {"step 15: the training loss is nan"});
}

TEST_F(TrainerTest, ResumeErrorsNameTheCheckpoint) {
  TaskConfig c = config("resume_errors");
  c.set_resume(true);
  {
    auto line = recipe();
    expect_error(trainer(c, *line)->run().status(), absl::StatusCode::kNotFound,
                 {"--resume: no checkpoint at", "resume_errors/ckpt/run_state.ckpt"});
  }
  ASSERT_OK(make_dirs(c.checkpoint_dir()));
  const std::string path = join_path(c.checkpoint_dir(), "run_state.ckpt");
  RunState s;
  ASSERT_OK(save_run_state(path, s, {{"model", "short"}}));
  {
    auto line = recipe();
    expect_error(trainer(c, *line)->run().status(), absl::StatusCode::kInvalidArgument,
                 {"restoring from", "resume_errors/ckpt/run_state.ckpt", "checkpoint model state", "bad magic"});
  }
  ASSERT_OK(save_run_state(path, s, {}));
  {
    auto line = recipe();
    expect_error(trainer(c, *line)->run().status(), absl::StatusCode::kDataLoss,
                 {"restoring from", "resume_errors/ckpt/run_state.ckpt", "checkpoint has no \"model\" state"});
  }
  ASSERT_OK_AND_ASSIGN(std::string bytes, read_file(path));
  ASSERT_OK(write_file_atomically(path, bytes.substr(0, bytes.size() - 1)));
  auto line = recipe();
  expect_error(trainer(c, *line)->run().status(), absl::StatusCode::kDataLoss, {path, "truncated"});
}

// A checkpoint's loop position counts steps of its batch size, seed and world
// size: a run with another is refused, naming the field.
TEST_F(TrainerTest, ResumeWithAnotherBatchSizeOrSeedIsRefused) {
  TaskConfig c = config("resume_shape");
  c.set_max_steps(3);
  {
    auto line = recipe();
    ASSERT_OK(trainer(c, *line)->run().status());
  }
  c.set_resume(true);
  c.set_max_steps(5);
  TaskConfig other_batch = c;
  other_batch.set_batch_size(kBatch * 2);
  auto line = recipe();
  expect_error(trainer(other_batch, *line)->run().status(), absl::StatusCode::kFailedPrecondition,
               {"restoring from", "written with batch_size 4 and this run has 8"});
  TaskConfig other_seed = c;
  other_seed.set_seed(kSeed + 1);
  expect_error(trainer(other_seed, *line)->run().status(), absl::StatusCode::kFailedPrecondition,
               {"written with seed"});
  EXPECT_OK(trainer(c, *line)->run().status());
}

// A resumed run continues the run that wrote its checkpoint: another lr or
// clipping (which a restored schedule would keep or ignore) is refused,
// naming the fields, and so is another training set; where the run runs
// and for how long may change.
TEST_F(TrainerTest, ResumeWithAnotherConfigOrTrainingSetIsRefused) {
  TaskConfig c = config("resume_config");
  c.set_max_steps(3);
  {
    auto line = recipe();
    ASSERT_OK(trainer(c, *line)->run().status());
  }
  c.set_resume(true);
  c.set_max_steps(5);
  TaskConfig other = c;
  other.mutable_sgd()->set_lr(0.4);
  other.set_grad_clip_norm(1);
  auto line = recipe();
  expect_error(trainer(other, *line)->run().status(), absl::StatusCode::kFailedPrecondition,
               {"restoring from", "written by a run of another config", "sgd.lr: 0.2 -> 0.4", "grad_clip_norm: 0 -> 1",
                "start a new run"});
  auto longer = recipe();
  longer->train_on(2 * kPoints);
  expect_error(trainer(c, *longer)->run().status(), absl::StatusCode::kFailedPrecondition,
               {"restoring from", "on 40 training examples and this run has 80", "another training set"});
  c.set_epochs(6);
  c.set_num_workers(1);
  c.set_progress_interval_seconds(1);
  EXPECT_OK(trainer(c, *line)->run().status());
}

// A run started without --resume in a checkpoint_dir that holds a
// checkpoint would replace it at its first save: it is refused, and the
// checkpoint stays as it was.
TEST_F(TrainerTest, ANewRunDoesNotReplaceAnEarlierRunsCheckpoint) {
  TaskConfig c = config("fresh_over_checkpoint");
  c.set_max_steps(3);
  {
    auto line = recipe();
    ASSERT_OK(trainer(c, *line)->run().status());
  }
  const std::string path = join_path(c.checkpoint_dir(), "run_state.ckpt");
  ASSERT_OK_AND_ASSIGN(const std::string before, read_file(path));
  auto line = recipe();
  expect_error(trainer(c, *line)->run().status(), absl::StatusCode::kAlreadyExists,
               {path, "holds the checkpoint of an earlier run", "--resume continues that run"});
  ASSERT_OK_AND_ASSIGN(const std::string after, read_file(path));
  EXPECT_EQ(after, before);
  EXPECT_EQ(line->steps_run, 0);
  c.set_resume(true);
  c.set_max_steps(5);
  EXPECT_OK(trainer(c, *line)->run().status());
}

// A checkpoint_dir no checkpoint can be written to stops the run before its
// first step, not at its first save.
TEST_F(TrainerTest, AnUnwritableCheckpointDirStopsTheRunBeforeTraining) {
  TaskConfig c = config("file_as_checkpoint_dir");
  ASSERT_OK(make_dirs(join_path(::testing::TempDir(), "file_as_checkpoint_dir")));
  const std::string file = join_path(join_path(::testing::TempDir(), "file_as_checkpoint_dir"), "a_file");
  ASSERT_OK(write_file_atomically(file, "not a directory"));
  c.set_checkpoint_dir(file);
  auto line = recipe();
  expect_error(trainer(c, *line)->run().status(), absl::StatusCode::kFailedPrecondition,
               {"checkpoint_dir", "a_file", "not a directory"});
  EXPECT_EQ(line->steps_run, 0);
}

TEST_F(TrainerTest, RecipeAndConfigErrors) {
  TaskConfig c = config("metric");
  c.set_target_metric("bleu");
  auto line = recipe();
  expect_error(trainer(c, *line)->run().status(), absl::StatusCode::kInvalidArgument, {"no 'bleu'", "accuracy, loss"});
  TaskConfig more = config("more_metric");
  more.add_more_targets()->set_metric("top5_accuracy");
  expect_error(trainer(more, *line)->run().status(), absl::StatusCode::kInvalidArgument,
               {"no 'top5_accuracy'", "more_targets"});

  TaskConfig bad = config("bad");
  bad.set_batch_size(0);
  expect_error(Trainer::create(bad, Device::cpu(), *line).status(), absl::StatusCode::kInvalidArgument,
               {"batch_size = 0"});
  TrainerOptions o;
  o.world_size = 2;
  o.rank = 2;
  expect_error(Trainer::create(config("rank"), Device::cpu(), *line, o).status(), absl::StatusCode::kInvalidArgument,
               {"rank 2"});
  TaskConfig too_large = config("too_large");
  too_large.set_batch_size(kPoints);
  too_large.set_gradient_accumulation_steps(2);
  expect_error(Trainer::create(too_large, Device::cpu(), *line).status(), absl::StatusCode::kInvalidArgument,
               {"make no step of 2 micro-batches"});
  line->no_data = true;
  expect_error(Trainer::create(config("no_data"), Device::cpu(), *line).status(), absl::StatusCode::kInvalidArgument,
               {"either both datasets", "or both batch sources"});
  TaskConfig clip = config("clip");
  clip.set_grad_clip_norm(-1);
  expect_error(Trainer::create(clip, Device::cpu(), *line).status(), absl::StatusCode::kInvalidArgument,
               {"grad_clip_norm = -1"});
}

// Gradient clipping bounds the first step's length by lr * max_norm, along
// the unclipped step; the recipe's lr factor scales every step's lr, and
// only that step's: lr 0.2 with factor 0.5 trains exactly as lr 0.1.
TEST_F(TrainerTest, ClippingAndTheRecipesLrFactorShapeTheSteps) {
  const auto steps = [&](int64_t count, double lr, double clip, double factor) {
    auto line = recipe();
    line->lr_factor_value = factor;
    TaskConfig c = config("steps");
    c.clear_checkpoint_dir();
    c.clear_checkpoint_interval_minutes();
    c.set_max_steps(count);
    c.mutable_sgd()->set_lr(lr);
    c.set_grad_clip_norm(clip);
    const std::vector<double> before = line->parameters();
    EXPECT_OK(trainer(c, *line)->run().status());
    const std::vector<double> after = line->parameters();
    return std::vector<double>{after[0] - before[0], after[1] - before[1]};
  };
  const std::vector<double> plain = steps(1, 0.2, 0, 1);
  const std::vector<double> clipped = steps(1, 0.2, 1e-3, 1);
  ASSERT_GT(std::hypot(plain[0], plain[1]), 0.2 * 1e-2) << "the test needs a gradient larger than the clip";
  EXPECT_NEAR(std::hypot(clipped[0], clipped[1]), 0.2 * 1e-3, 1e-9);
  EXPECT_NEAR(clipped[0] / clipped[1], plain[0] / plain[1], 1e-9);
  EXPECT_EQ(steps(3, 0.2, 0, 0.5), steps(3, 0.1, 0, 1));
  EXPECT_NE(steps(3, 0.2, 0, 0.5), steps(3, 0.2, 0, 1));
}

}  // namespace
}  // namespace ts::tasks
