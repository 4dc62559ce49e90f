#include "tasks/common/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tasks/common/checkpoint_schedule.h"
#include "tasks/common/config.h"
#include "tasks/common/files.h"
#include "tasks/common/flags.h"
#include "tasks/common/progress.h"
#include "tasks/common/run_state_file.h"
#include "tasks/common/step_times.h"
#include "tasks/common/time_to_target.h"
#include "tensor/random.h"
#include "tensor/status_macros.h"

namespace ts::tasks {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

absl::Status with_context(const absl::Status& s, absl::string_view context) {
  return absl::Status(s.code(), absl::StrCat(context, ": ", s.message()));
}

}  // namespace

// Everything one run() tracks, saved into and restored from RunState.
struct Runner::Loop {
  Loop(const TaskConfig& c, std::FILE* out)
      : steps(c.warmup_steps()),
        target(c.target_metric(), c.target_value()),
        progress(ProgressLine::for_stream(out, c.progress_interval_seconds())) {}

  // Position: the next step is step_in_epoch of epoch.
  int epoch = 0;
  int64_t step_in_epoch = 0;
  int64_t global_step = 0;

  StepTimes steps;
  TimeToTarget target;
  ProgressLine progress;
  double elapsed_before = 0;  // run time of earlier sessions
  double session_start = 0;
  double step_seconds_total = 0;
  RngState epoch_start_rng;
  RngState resume_rng;  // the streams to continue with after a mid-epoch begin_epoch replay

  // The epoch in progress.
  double epoch_loss_sum = 0;
  int64_t epoch_samples = 0;
  double epoch_seconds_before = 0;  // of earlier sessions
  double epoch_session_start = 0;

  // This session, for samples/s and the ETA.
  int64_t session_steps = 0;
  int64_t session_samples = 0;
  double session_step_seconds = 0;

  double last_loss = 0;
  Metrics last_metrics;
  int epochs_completed = 0;
  bool resumed = false;
};

Runner::Runner(TaskConfig config, RunnerOptions options, Device device)
    : config_(std::move(config)), options_(std::move(options)), device_(device) {
  if (!options_.clock) options_.clock = steady_seconds;
}

Runner::~Runner() = default;

absl::StatusOr<std::unique_ptr<Runner>> Runner::from_flags(absl::string_view default_config_path,
                                                           RunnerOptions options) {
  ASSIGN_OR_RETURN(TaskConfig config, config_from_flags(default_config_path));
  return create(std::move(config), std::move(options));
}

absl::StatusOr<std::unique_ptr<Runner>> Runner::create(TaskConfig config, RunnerOptions options) {
  RETURN_IF_ERROR(validate_config(config));
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("runner: rank ", options.rank, " is not in a world of size ", options.world_size));
  }
  ASSIGN_OR_RETURN(Device device, select_device(config.device(), options.local_rank));
  std::unique_ptr<Runner> runner(new Runner(std::move(config), std::move(options), device));
  seed_everything(runner->config_.seed(), runner->rng_);
  return runner;
}

std::string Runner::report_path() const { return join_path(config_.output_dir(), "report.json"); }
std::string Runner::checkpoint_path() const { return join_path(config_.checkpoint_dir(), "run_state.ckpt"); }

namespace {

RngState capture_rng(const std::mt19937_64& rng) {
  RngState s;
  const Generator::State g = default_generator().state();
  s.mutable_tensor()->set_seed(g.seed);
  s.mutable_tensor()->set_offset(g.offset);
  std::ostringstream host;
  host << rng;
  s.set_host(host.str());
  return s;
}

absl::Status apply_rng(const RngState& s, std::mt19937_64& rng) {
  std::istringstream host(s.host());
  std::mt19937_64 parsed;
  if (!(host >> parsed)) return absl::DataLossError("run state: the host RNG state does not parse");
  rng = parsed;
  default_generator().set_state({s.tensor().seed(), s.tensor().offset()});
  return absl::OkStatus();
}

}  // namespace

absl::Status Runner::save_checkpoint(const TaskHooks& hooks, const Loop& loop) {
  if (options_.rank != 0) return absl::OkStatus();
  RunState s;
  s.set_epoch(loop.epoch);
  s.set_step_in_epoch(loop.step_in_epoch);
  s.set_global_step(loop.global_step);
  const double t = now();
  s.set_elapsed_seconds(loop.elapsed_before + (t - loop.session_start));
  *s.mutable_rng() = capture_rng(rng_);
  *s.mutable_epoch_start_rng() = loop.epoch_start_rng;
  for (const double x : loop.steps.counted_seconds()) s.add_step_seconds(x);
  s.set_step_samples(loop.steps.samples());
  s.set_step_seconds_total(loop.step_seconds_total);
  for (const auto& [name, seconds] : timers_.totals()) (*s.mutable_time_buckets())[name] = seconds;
  s.set_target_reached(loop.target.reached());
  s.set_target_seconds(loop.target.seconds());
  s.set_target_epoch(loop.target.epoch());
  s.set_has_best_metric(loop.target.has_best());
  s.set_best_metric(loop.target.best());
  s.set_report_epochs_json(report_.json().find("epochs")->dump(-1));
  s.set_epoch_loss_sum(loop.epoch_loss_sum);
  s.set_epoch_samples(loop.epoch_samples);
  s.set_epoch_seconds(loop.epoch_seconds_before + (t - loop.epoch_session_start));
  ASSIGN_OR_RETURN(StateBlobs blobs, hooks.save_state());
  for (auto& [name, bytes] : blobs) (*s.mutable_blobs())[name] = std::move(bytes);
  RETURN_IF_ERROR(make_dirs(config_.checkpoint_dir()));
  return save_run_state(checkpoint_path(), s);
}

absl::Status Runner::restore(const TaskHooks& hooks, Loop& loop) {
  absl::StatusOr<RunState> loaded = load_run_state(checkpoint_path());
  if (absl::IsNotFound(loaded.status())) {
    return absl::NotFoundError(absl::StrCat("--resume: no checkpoint at ", checkpoint_path()));
  }
  if (!loaded.ok()) return loaded.status();
  const RunState& s = *loaded;
  if (absl::Status st = hooks.restore_state(StateBlobs(s.blobs().begin(), s.blobs().end())); !st.ok()) {
    return with_context(st, absl::StrCat("restore_state from ", checkpoint_path()));
  }
  loop.epoch = s.epoch();
  loop.step_in_epoch = s.step_in_epoch();
  loop.global_step = s.global_step();
  loop.elapsed_before = s.elapsed_seconds();
  loop.epoch_start_rng = s.epoch_start_rng();
  loop.resume_rng = s.rng();
  RETURN_IF_ERROR(apply_rng(s.rng(), rng_));
  loop.steps.restore({s.step_seconds().begin(), s.step_seconds().end()}, s.step_samples());
  loop.step_seconds_total = s.step_seconds_total();
  timers_.restore({s.time_buckets().begin(), s.time_buckets().end()});
  loop.target.restore(s.target_reached(), s.target_seconds(), s.target_epoch(), s.has_best_metric(), s.best_metric());
  ASSIGN_OR_RETURN(Json epochs, parse_json(s.report_epochs_json()));
  RETURN_IF_ERROR(report_.restore_epochs(epochs));
  loop.epochs_completed = static_cast<int>(epochs.as_array().size());
  loop.epoch_loss_sum = s.epoch_loss_sum();
  loop.epoch_samples = s.epoch_samples();
  loop.epoch_seconds_before = s.epoch_seconds();
  loop.resumed = true;
  return absl::OkStatus();
}

absl::Status Runner::finish_epoch(const TaskHooks& hooks, Loop& loop, bool evaluate) {
  EpochRecord record;
  record.epoch = loop.epoch + 1;
  record.steps = loop.step_in_epoch;
  record.train_loss = loop.epoch_samples > 0 ? loop.epoch_loss_sum / static_cast<double>(loop.epoch_samples) : 0;
  record.lr = hooks.current_lr ? hooks.current_lr() : config_.lr();
  if (evaluate) {
    absl::StatusOr<Metrics> metrics = hooks.evaluate(loop.epoch);
    if (!metrics.ok()) return with_context(metrics.status(), absl::StrCat("evaluate (epoch ", loop.epoch + 1, ")"));
    const auto it = metrics->find(config_.target_metric());
    if (it == metrics->end()) {
      std::vector<std::string> names;
      for (const auto& [name, value] : *metrics) names.push_back(name);
      return absl::InvalidArgumentError(absl::StrCat("evaluate returned no '", config_.target_metric(),
                                                     "' (config target_metric); it returned: ",
                                                     absl::StrJoin(names, ", ")));
    }
    record.metrics = *metrics;
    loop.last_metrics = *metrics;
  }
  const double t = now();
  const double elapsed = loop.elapsed_before + (t - loop.session_start);
  record.epoch_seconds = loop.epoch_seconds_before + (t - loop.epoch_session_start);
  record.wall_seconds = elapsed;
  if (evaluate) loop.target.observe(record.metrics.at(config_.target_metric()), elapsed, record.epoch);
  report_.add_epoch(record);
  ++loop.epochs_completed;

  if (options_.rank != 0) return absl::OkStatus();
  std::string line = absl::StrCat("epoch ", record.epoch, "/", config_.epochs(), " done: train_loss ", record.train_loss);
  for (const auto& [name, value] : record.metrics) absl::StrAppend(&line, "  ", name, " ", value);
  absl::StrAppend(&line, "  lr ", record.lr, "  ", format_duration(record.epoch_seconds));
  loop.progress.message(line);
  if (events_) {
    RETURN_IF_ERROR(events_->add_scalar("train/epoch_loss", record.train_loss, loop.global_step));
    RETURN_IF_ERROR(events_->add_scalar("train/lr", record.lr, loop.global_step));
    for (const auto& [name, value] : record.metrics) {
      RETURN_IF_ERROR(events_->add_scalar(absl::StrCat("eval/", name), value, loop.global_step));
    }
    RETURN_IF_ERROR(events_->add_scalar("throughput/samples_per_s",
                                        loop.session_step_seconds > 0 ? loop.session_samples / loop.session_step_seconds : 0,
                                        loop.global_step));
    RETURN_IF_ERROR(events_->flush());
  }
  return write_report(loop);
}

absl::Status Runner::write_report(const Loop& loop) {
  if (options_.rank != 0) return absl::OkStatus();
  report_.set("throughput", loop.steps.to_json());
  report_.set("time_to_target", loop.target.to_json());
  Json breakdown = Json::object();
  breakdown["step_seconds_total"] = loop.step_seconds_total;
  Json buckets = Json::object();
  double fed = 0;
  for (const auto& [name, seconds] : timers_.totals()) {
    buckets[name] = seconds;
    fed += seconds;
  }
  breakdown["buckets"] = std::move(buckets);
  // Step time no bucket claims: compute, data loading, host overhead.
  breakdown["other_seconds"] = loop.step_seconds_total - fed;
  report_.set("time_breakdown", std::move(breakdown));
  Json run = Json::object();
  run["epochs_completed"] = loop.epochs_completed;
  run["global_step"] = loop.global_step;
  run["elapsed_seconds"] = loop.elapsed_before + (now() - loop.session_start);
  run["resumed"] = loop.resumed;
  report_.set("run", std::move(run));
  RETURN_IF_ERROR(make_dirs(config_.output_dir()));
  return report_.write(report_path());
}

absl::StatusOr<RunSummary> Runner::run(const TaskHooks& hooks) {
  if (!hooks.steps_per_epoch || !hooks.train_step || !hooks.evaluate) {
    return absl::InvalidArgumentError("runner: TaskHooks needs steps_per_epoch, train_step and evaluate");
  }
  const bool checkpoints = !config_.checkpoint_dir().empty();
  if (checkpoints && (!hooks.save_state || !hooks.restore_state)) {
    return absl::InvalidArgumentError("runner: checkpoint_dir is set, so TaskHooks needs save_state and restore_state");
  }
  const bool leader = options_.rank == 0;
  Loop loop(config_, options_.progress_out);
  if (leader) {
    RETURN_IF_ERROR(make_dirs(config_.output_dir()));
    ASSIGN_OR_RETURN(events_, EventWriter::create(join_path(config_.output_dir(), "tensorboard")));
    report_.set("config", config_to_json(config_));
    report_.set("environment", describe_environment(device_).to_json());
    Json world = Json::object();
    world["size"] = options_.world_size;
    world["rank"] = options_.rank;
    report_.set("world", std::move(world));
  }
  loop.session_start = now();
  if (config_.resume()) RETURN_IF_ERROR(restore(hooks, loop));
  CheckpointSchedule schedule(config_.checkpoint_interval_minutes(), now());
  const int64_t max_steps = config_.max_steps();
  const auto out_of_steps = [&] { return max_steps > 0 && loop.global_step >= max_steps; };

  while (loop.epoch < config_.epochs() && !out_of_steps()) {
    const int epoch = loop.epoch;
    const bool mid_epoch = loop.step_in_epoch > 0;
    if (mid_epoch) {
      // Replay begin_epoch from the epoch's starting streams (same shuffle),
      // then continue from where the checkpoint left them.
      RETURN_IF_ERROR(apply_rng(loop.epoch_start_rng, rng_));
    } else {
      loop.epoch_start_rng = capture_rng(rng_);
      loop.epoch_loss_sum = 0;
      loop.epoch_samples = 0;
      loop.epoch_seconds_before = 0;
    }
    loop.epoch_session_start = now();
    if (hooks.begin_epoch) {
      if (absl::Status s = hooks.begin_epoch(epoch); !s.ok()) {
        return with_context(s, absl::StrCat("begin_epoch (epoch ", epoch + 1, ")"));
      }
    }
    if (mid_epoch) RETURN_IF_ERROR(apply_rng(loop.resume_rng, rng_));
    const int64_t steps = hooks.steps_per_epoch(epoch);
    if (steps < 1) return absl::InvalidArgumentError(absl::StrCat("steps_per_epoch(", epoch, ") = ", steps, ": no data"));
    if (loop.step_in_epoch > steps) {
      return absl::FailedPreconditionError(absl::StrCat("checkpoint is at step ", loop.step_in_epoch, " of epoch ",
                                                        epoch + 1, ", which has only ", steps, " steps now"));
    }

    while (loop.step_in_epoch < steps && !out_of_steps()) {
      const int64_t step = loop.step_in_epoch;
      const double t0 = now();
      absl::StatusOr<StepResult> r = hooks.train_step(epoch, step);
      if (!r.ok()) return with_context(r.status(), absl::StrCat("train_step (epoch ", epoch + 1, ", step ", step, ")"));
      const double dt = now() - t0;
      if (!std::isfinite(r->loss)) {
        return absl::InternalError(absl::StrCat("train_step (epoch ", epoch + 1, ", step ", step, "): loss is ", r->loss));
      }
      loop.steps.record(dt, r->samples);
      loop.step_seconds_total += dt;
      loop.session_step_seconds += dt;
      ++loop.session_steps;
      loop.session_samples += r->samples;
      loop.epoch_loss_sum += r->loss * static_cast<double>(r->samples);
      loop.epoch_samples += r->samples;
      loop.last_loss = r->loss;
      ++loop.step_in_epoch;
      ++loop.global_step;

      if (leader) {
        RETURN_IF_ERROR(events_->add_scalar("train/loss", r->loss, loop.global_step));
        int64_t remaining = (steps - loop.step_in_epoch) + (config_.epochs() - epoch - 1) * steps;
        if (max_steps > 0) remaining = std::min(remaining, max_steps - loop.global_step);
        ProgressState p;
        p.epoch = epoch + 1;
        p.epochs = config_.epochs();
        p.step = loop.step_in_epoch;
        p.steps = steps;
        p.loss = loop.epoch_loss_sum / static_cast<double>(std::max<int64_t>(loop.epoch_samples, 1));
        p.samples_per_second = loop.session_step_seconds > 0 ? loop.session_samples / loop.session_step_seconds : 0;
        p.eta_seconds = eta_seconds(loop.session_step_seconds, loop.session_steps, remaining);
        loop.progress.update(p, now());
      }
      if (checkpoints && schedule.due(now())) {
        RETURN_IF_ERROR(save_checkpoint(hooks, loop));
        schedule.saved(now());
      }
    }
    if (loop.step_in_epoch < steps) break;  // max_steps stopped it mid-epoch

    const bool last = epoch + 1 == config_.epochs() || out_of_steps();
    RETURN_IF_ERROR(finish_epoch(hooks, loop, last || (epoch + 1) % config_.eval_every_epochs() == 0));
    loop.epoch = epoch + 1;
    loop.step_in_epoch = 0;
    if (checkpoints) {
      RETURN_IF_ERROR(save_checkpoint(hooks, loop));
      schedule.saved(now());
    }
    // The report so far, so that a run killed later keeps its record.
    if (leader) RETURN_IF_ERROR(write_report(loop));
  }
  // A run stopped mid-epoch by max_steps can be continued with --resume.
  if (checkpoints && loop.step_in_epoch > 0) RETURN_IF_ERROR(save_checkpoint(hooks, loop));
  if (leader) {
    loop.progress.finish();
    RETURN_IF_ERROR(events_->flush());
    RETURN_IF_ERROR(write_report(loop));
  }
  events_.reset();

  RunSummary summary;
  summary.epochs_completed = loop.epochs_completed;
  summary.global_step = loop.global_step;
  summary.elapsed_seconds = loop.elapsed_before + (now() - loop.session_start);
  summary.last_loss = loop.last_loss;
  summary.last_metrics = loop.last_metrics;
  summary.target_reached = loop.target.reached();
  summary.resumed = loop.resumed;
  return summary;
}

}  // namespace ts::tasks
