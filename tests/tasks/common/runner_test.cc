// The Runner on a toy task (a line y = 3x + 1 fitted by SGD in plain doubles,
// shuffled by the runner's RNG, with noise from both random streams): a run
// that crashes after a timed mid-epoch checkpoint, or stops at max_steps,
// resumes to bit-identical parameters and losses; the report and TensorBoard
// files hold what the run did; bad states and hooks are named errors.
#include "tasks/common/runner.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "gtest/gtest.h"
#include "tasks/common/files.h"
#include "tasks/common/run_state_file.h"
#include "tasks/common/tfrecord.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using ::ts::testing::expect_error;

constexpr int kPoints = 40;
constexpr int kBatch = 4;

// Each call advances 0.5 s, so timed checkpoints come every few steps.
struct FakeClock {
  double t = 0;
  double operator()() { return t += 0.5; }
};

struct LineTask {
  explicit LineTask(Runner& r) : runner(r) {}
  Runner& runner;
  double a = 0, b = 0;
  std::vector<int> order;
  std::vector<double> losses;   // every step this object ran
  int64_t fail_at_step = -1;    // global step at which train_step "crashes"
  int64_t steps_run = 0;        // this session
  int64_t first_global_step = 0;

  static double x(int i) { return 2.0 * i / kPoints - 1; }
  static double y(int i) { return 3 * x(i) + 1; }

  TaskHooks hooks() {
    TaskHooks h;
    h.steps_per_epoch = [](int) { return int64_t{kPoints / kBatch}; };
    h.begin_epoch = [this](int) {
      order.resize(kPoints);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), runner.rng());
      return absl::OkStatus();
    };
    h.train_step = [this](int, int64_t step) -> absl::StatusOr<StepResult> {
      if (first_global_step + steps_run == fail_at_step) return absl::AbortedError("simulated crash");
      double ga = 0, gb = 0, loss = 0;
      for (int k = 0; k < kBatch; ++k) {
        const int i = order[step * kBatch + k];
        const double err = a * x(i) + b - y(i);
        loss += err * err / kBatch;
        ga += 2 * err * x(i) / kBatch;
        gb += 2 * err / kBatch;
      }
      // Noise from the host RNG and from the tensor generator: a resume
      // that restored either stream wrongly would change the parameters.
      const double host_noise = std::uniform_real_distribution<double>(-1e-3, 1e-3)(runner.rng());
      absl::StatusOr<Tensor> r = rand({1});
      if (!r.ok()) return r.status();
      absl::StatusOr<float> tensor_noise = item<float>(*r);
      if (!tensor_noise.ok()) return tensor_noise.status();
      const double lr = runner.config().lr();
      a -= lr * (ga + host_noise);
      b -= lr * (gb + 1e-3 * *tensor_noise);
      runner.timers().add("communication", 0.125);
      losses.push_back(loss);
      ++steps_run;
      return StepResult{loss, kBatch};
    };
    h.evaluate = [this](int) -> absl::StatusOr<Metrics> {
      double mse = 0;
      int close = 0;
      for (int i = 0; i < kPoints; ++i) {
        const double err = a * x(i) + b - y(i);
        mse += err * err / kPoints;
        close += std::abs(err) < 0.05;
      }
      return Metrics{{"accuracy", static_cast<double>(close) / kPoints}, {"mse", mse}};
    };
    h.save_state = [this]() -> absl::StatusOr<StateBlobs> {
      std::string model(2 * sizeof(double), '\0');
      std::memcpy(model.data(), &a, sizeof a);
      std::memcpy(model.data() + sizeof a, &b, sizeof b);
      return StateBlobs{{"model", model}};
    };
    h.restore_state = [this](const StateBlobs& blobs) {
      const auto it = blobs.find("model");
      if (it == blobs.end() || it->second.size() != 2 * sizeof(double)) {
        return absl::DataLossError("model blob: expected 16 bytes");
      }
      std::memcpy(&a, it->second.data(), sizeof a);
      std::memcpy(&b, it->second.data() + sizeof a, sizeof b);
      return absl::OkStatus();
    };
    h.current_lr = [this] { return runner.config().lr(); };
    return h;
  }
};

class RunnerTest : public ::testing::Test {
 protected:
  TaskConfig config(const std::string& name) {
    TaskConfig c;
    c.set_name(name);
    c.set_seed(1234);
    c.set_epochs(4);
    c.set_batch_size(kBatch);
    c.set_lr(0.2);
    c.set_target_metric("accuracy");
    c.set_target_value(0.9);
    c.set_device("cpu");
    c.set_warmup_steps(2);
    const std::string root = join_path(::testing::TempDir(), name);
    c.set_output_dir(join_path(root, "out"));
    c.set_checkpoint_dir(join_path(root, "ckpt"));
    c.set_checkpoint_interval_minutes(0.1);  // 6 s of fake time
    return c;
  }

  std::unique_ptr<Runner> runner(const TaskConfig& c) {
    RunnerOptions o;
    o.clock = FakeClock{};
    o.progress_out = out_;
    auto r = Runner::create(c, o);
    EXPECT_TRUE(r.ok()) << r.status();
    return std::move(r).value();
  }

  void TearDown() override { std::fclose(out_); }
  std::FILE* out_ = std::tmpfile();
};

struct Final {
  double a, b;
  std::vector<double> losses;
};

Final train_uninterrupted(RunnerTest* t, std::unique_ptr<Runner> r) {
  LineTask task(*r);
  auto summary = r->run(task.hooks());
  EXPECT_TRUE(summary.ok()) << summary.status();
  return {task.a, task.b, task.losses};
}

TEST_F(RunnerTest, CrashAfterTimedCheckpointResumesBitIdentically) {
  auto reference_runner = runner(config("reference"));
  const Final reference = train_uninterrupted(this, std::move(reference_runner));
  ASSERT_EQ(reference.losses.size(), 40u);
  EXPECT_LT(reference.losses.back(), 1e-2 * reference.losses.front());  // it learns

  TaskConfig c = config("crash");
  {
    auto r = runner(c);
    LineTask task(*r);
    task.fail_at_step = 27;  // epoch 3, step 7
    expect_error(r->run(task.hooks()).status(), absl::StatusCode::kAborted,
                 {"train_step (epoch 3, step 7)", "simulated crash"});
  }
  ASSERT_OK_AND_ASSIGN(RunState saved, load_run_state(join_path(c.checkpoint_dir(), "run_state.ckpt")));
  ASSERT_EQ(saved.epoch(), 2);  // a timed checkpoint inside epoch 3, not an epoch-end one
  ASSERT_GT(saved.step_in_epoch(), 0);
  ASSERT_LT(saved.step_in_epoch(), 7);

  c.set_resume(true);
  auto r = runner(c);
  LineTask resumed(*r);
  resumed.first_global_step = saved.global_step();
  ASSERT_OK_AND_ASSIGN(RunSummary summary, r->run(resumed.hooks()));
  EXPECT_TRUE(summary.resumed);
  EXPECT_EQ(summary.global_step, 40);
  EXPECT_EQ(summary.epochs_completed, 4);
  EXPECT_EQ(resumed.a, reference.a);  // bit-identical
  EXPECT_EQ(resumed.b, reference.b);
  const std::vector<double> tail(reference.losses.begin() + saved.global_step(), reference.losses.end());
  EXPECT_EQ(resumed.losses, tail);

  // The resumed report covers the whole run.
  ASSERT_OK_AND_ASSIGN(std::string text, read_file(r->report_path()));
  ASSERT_OK_AND_ASSIGN(Json report, parse_json(text));
  EXPECT_EQ(report.find("epochs")->as_array().size(), 4u);
  EXPECT_TRUE(report.find("run")->find("resumed")->as_bool());
}

TEST_F(RunnerTest, MaxStepsStopsAndResumeFinishes) {
  const Final reference = train_uninterrupted(this, runner(config("reference2")));
  TaskConfig c = config("maxsteps");
  c.set_checkpoint_interval_minutes(0);  // epoch ends and the stop only
  c.set_max_steps(13);
  {
    auto r = runner(c);
    LineTask task(*r);
    ASSERT_OK_AND_ASSIGN(RunSummary s, r->run(task.hooks()));
    EXPECT_EQ(s.global_step, 13);
    EXPECT_EQ(s.epochs_completed, 1);
  }
  c.set_max_steps(0);
  c.set_resume(true);
  auto r = runner(c);
  LineTask resumed(*r);
  resumed.first_global_step = 13;
  ASSERT_OK(r->run(resumed.hooks()).status());
  EXPECT_EQ(resumed.a, reference.a);
  EXPECT_EQ(resumed.b, reference.b);
}

TEST_F(RunnerTest, ReportAndEventsHoldTheRun) {
  TaskConfig c = config("report");
  c.set_eval_every_epochs(3);  // evaluates after epochs 3 and 4 (the last)
  auto r = runner(c);
  LineTask task(*r);
  ASSERT_OK_AND_ASSIGN(RunSummary summary, r->run(task.hooks()));
  EXPECT_TRUE(summary.target_reached);

  ASSERT_OK_AND_ASSIGN(std::string text, read_file(r->report_path()));
  ASSERT_OK_AND_ASSIGN(Json j, parse_json(text));
  EXPECT_EQ(j.find("config")->find("lr")->as_double(), 0.2);
  EXPECT_EQ(j.find("environment")->find("device")->as_string(), "cpu");
  EXPECT_EQ(j.find("world")->find("size")->as_int(), 1);
  const auto& epochs = j.find("epochs")->as_array();
  ASSERT_EQ(epochs.size(), 4u);
  EXPECT_TRUE(epochs[0].find("eval")->as_object().empty());
  EXPECT_EQ(epochs[2].find("eval")->find("accuracy")->type(), Json::Type::kDouble);
  EXPECT_EQ(epochs[3].find("steps")->as_int(), 10);
  EXPECT_EQ(epochs[3].find("lr")->as_double(), 0.2);
  // Mean of the epoch's step losses (equal batch sizes).
  double sum = 0;
  for (int i = 30; i < 40; ++i) sum += task.losses[i];
  EXPECT_NEAR(epochs[3].find("train_loss")->as_double(), sum / 10, 1e-12);
  const Json& tp = *j.find("throughput");
  EXPECT_EQ(tp.find("steps")->as_int(), 38);  // 40 minus 2 warm-up steps
  EXPECT_EQ(tp.find("samples")->as_int(), 38 * kBatch);
  for (const char* p : {"p50_s", "p75_s", "p90_s", "p95_s", "samples_per_s"}) {
    EXPECT_GT(tp.find(p)->as_double(), 0) << p;
  }
  const Json& ttt = *j.find("time_to_target");
  EXPECT_TRUE(ttt.find("reached")->as_bool());
  EXPECT_EQ(ttt.find("epoch")->as_int(), 3);
  const Json& breakdown = *j.find("time_breakdown");
  EXPECT_DOUBLE_EQ(breakdown.find("buckets")->find("communication")->as_double(), 40 * 0.125);
  EXPECT_DOUBLE_EQ(breakdown.find("other_seconds")->as_double(),
                   breakdown.find("step_seconds_total")->as_double() - 40 * 0.125);

  // TensorBoard: the version record, 40 step losses, per epoch loss and lr
  // and throughput, 2 metrics in 2 evaluated epochs.
  const std::string tb = join_path(c.output_dir(), "tensorboard");
  DIR* d = opendir(tb.c_str());
  ASSERT_NE(d, nullptr);
  std::string event_file;
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name).find("tfevents") != std::string::npos) event_file = join_path(tb, e->d_name);
  }
  closedir(d);
  ASSERT_OK_AND_ASSIGN(std::string bytes, read_file(event_file));
  ASSERT_OK_AND_ASSIGN(auto records, read_tfrecords(bytes, event_file));
  EXPECT_EQ(records.size(), 1u + 40 + 4 * 3 + 2 * 2);
}

TEST_F(RunnerTest, TargetNotReachedIsSaid) {
  TaskConfig c = config("unreached");
  c.set_epochs(1);
  c.set_target_value(1.5);  // accuracy never exceeds 1
  auto r = runner(c);
  LineTask task(*r);
  ASSERT_OK(r->run(task.hooks()).status());
  ASSERT_OK_AND_ASSIGN(std::string text, read_file(r->report_path()));
  ASSERT_OK_AND_ASSIGN(Json j, parse_json(text));
  EXPECT_EQ(j.find("time_to_target")->find("seconds")->as_string(), "not reached");
}

TEST_F(RunnerTest, ResumeErrorsNameTheCheckpoint) {
  TaskConfig c = config("resume_errors");
  c.set_resume(true);
  {
    auto r = runner(c);
    LineTask task(*r);
    expect_error(r->run(task.hooks()).status(), absl::StatusCode::kNotFound,
                 {"--resume: no checkpoint at", "resume_errors/ckpt/run_state.ckpt"});
  }
  ASSERT_OK(make_dirs(c.checkpoint_dir()));
  const std::string path = join_path(c.checkpoint_dir(), "run_state.ckpt");
  RunState s;
  (*s.mutable_blobs())["model"] = "short";
  ASSERT_OK(save_run_state(path, s));
  {
    auto r = runner(c);
    LineTask task(*r);
    expect_error(r->run(task.hooks()).status(), absl::StatusCode::kDataLoss,
                 {"restore_state from", path, "model blob"});
  }
  ASSERT_OK_AND_ASSIGN(std::string bytes, read_file(path));
  ASSERT_OK(write_file_atomically(path, bytes.substr(0, bytes.size() - 1)));
  auto r = runner(c);
  LineTask task(*r);
  expect_error(r->run(task.hooks()).status(), absl::StatusCode::kDataLoss, {path, "truncated"});
}

TEST_F(RunnerTest, HookAndConfigErrors) {
  TaskConfig c = config("hooks");
  c.set_target_metric("bleu");
  auto r = runner(c);
  LineTask task(*r);
  expect_error(r->run(task.hooks()).status(), absl::StatusCode::kInvalidArgument,
               {"no 'bleu'", "accuracy, mse"});
  TaskHooks missing = task.hooks();
  missing.save_state = nullptr;
  expect_error(r->run(missing).status(), absl::StatusCode::kInvalidArgument, {"save_state"});

  TaskConfig bad = config("bad");
  bad.set_batch_size(0);
  expect_error(Runner::create(bad).status(), absl::StatusCode::kInvalidArgument, {"batch_size = 0"});
  RunnerOptions o;
  o.world_size = 2;
  o.rank = 2;
  expect_error(Runner::create(config("rank"), o).status(), absl::StatusCode::kInvalidArgument, {"rank 2"});
}

}  // namespace
}  // namespace ts::tasks
