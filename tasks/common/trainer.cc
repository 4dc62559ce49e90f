#include "tasks/common/trainer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "base/error.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "collectives/ddp/distributed_data_parallel.h"
#include "nn/checkpoint.h"
#include "optim/clip.h"
#include "optim/lr_control.h"
#include "optim/mixed_precision.h"
#include "tasks/common/batch_sources.h"
#include "tasks/common/checkpoint_schedule.h"
#include "tasks/common/config.h"
#include "tasks/common/config_diff.h"
#include "tasks/common/curve.h"
#include "tasks/common/environment.h"
#include "tasks/common/event_writer.h"
#include "tasks/common/exit_code.h"
#include "tasks/common/loss_log.h"
#include "tasks/common/optimizer_factory.h"
#include "tasks/common/precision.h"
#include "tasks/common/progress.h"
#include "tasks/common/rank_states.h"
#include "tasks/common/run_state_file.h"
#include "tasks/common/scaling.h"
#include "tasks/common/step_clock.h"
#include "tasks/common/step_times.h"
#include "tasks/common/stop_signals.h"
#include "tasks/common/time_to_target.h"
#include "tensor/cpu/parallel.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace ts::tasks {
namespace {

// How often the ranks of a run agree whether the progress line or a timed
// checkpoint is due (rank 0's clock; both read every rank's losses, and a
// checkpoint holds every rank's recipe state) and whether a stop signal came
// (any rank's): a collective the host waits for, so not every step.
constexpr int64_t kVoteSteps = 16;

// What a resumed run may set otherwise than the run that wrote its
// checkpoint: where it runs and reads, for how long, what it reports (the
// targets are checked on their own, with their own message).
constexpr absl::string_view kMayChangeOnResume[] = {
    "name",         "epochs",          "max_steps",      "stop_at_target",
    "resume",       "checkpoint_dir",  "output_dir",     "checkpoint_interval_minutes",
    "data_path",    "num_workers",     "device",         "progress_interval_seconds",
    "warmup_steps", "baseline_report", "price_per_hour", "target_metric",
    "target_value", "target_minimize", "more_targets"};

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

absl::Status with_context(const absl::Status& s, absl::string_view context) {
  return absl::Status(s.code(), absl::StrCat(context, ": ", s.message()));
}

absl::StatusOr<int> count_nodes(collectives::Communicator& comm, Device device) {
  ASSIGN_OR_RETURN(const Tensor firsts, capture([&] {
                     return full({1}, comm.local_rank() == 0 ? 1.0 : 0.0, {DType::kF64, device});
                   }));
  RETURN_IF_ERROR(comm.allreduce(firsts, collectives::ReduceOp::kSum).synchronize());
  ASSIGN_OR_RETURN(const double nodes, capture([&] { return item<double>(firsts); }));
  return static_cast<int>(std::lround(nodes));
}

// The batch's fields on `device`, as the model takes them (cast and laid out
// as `precision` says).
std::vector<Tensor> fields_on(const data::Batch& batch, Device device, const Precision& precision) {
  std::vector<Tensor> fields;
  fields.reserve(batch.fields.size());
  for (const Tensor& t : batch.fields) fields.push_back(precision.input(to(t, device)));
  return fields;
}

Precision precision_of(const TaskConfig& c) {
  Precision p{DType::kF32, c.tf32(), c.channels_last()};
  if (c.dtype() == TaskConfig::F16) p.dtype = DType::kF16;
  if (c.dtype() == TaskConfig::BF16) p.dtype = DType::kBF16;
  return p;
}

optim::LossScalerOptions loss_scaler_options(const TaskConfig& c) {
  const TaskConfig::LossScalerConfig& s = c.loss_scaler();
  return {.initial = s.initial(), .factor = s.factor(), .window = s.window(), .max = s.max(), .min = s.min()};
}

}  // namespace

struct Trainer::Parts {
  Parts(const TaskConfig& config, Device device, std::FILE* out, std::optional<bool> terminal,
        std::function<double()> clock)
      : progress(terminal ? ProgressLine(out, *terminal, config.progress_interval_seconds())
                          : ProgressLine::for_stream(out, config.progress_interval_seconds())),
        step_clock(device, std::move(clock)) {}

  std::shared_ptr<nn::Module> model;
  // The model's dtype and layout, how batches reach it, and under mixed
  // precision its masters and loss scaler.
  std::unique_ptr<PrecisionStep> precision;
  std::vector<autograd::Variable> optimized;  // what the optimizer steps, for gradient clipping
  std::unique_ptr<collectives::ddp::DistributedDataParallel> ddp;
  std::unique_ptr<optim::Optimizer> optimizer;
  optim::Asgd* asgd = nullptr;  // the optimizer, once NT-ASGD has switched to it
  std::optional<optim::LrControl> lr;
  std::shared_ptr<data::BatchSource> train_batches, eval_batches;
  std::unique_ptr<EventWriter> events;
  ProgressLine progress;
  StepClock step_clock;
  LossLog losses;
  // Views over parts of the run state, made once it is restored.
  std::optional<StepTimes> step_times;
  std::optional<TimeToTarget> target;
  std::vector<TimeToTarget> more_targets;  // config.more_targets
  std::optional<Curve> loss_curve;
  absl::Duration reported_comm_wait;
  // For the report's scaling and price sections: the baseline run (read by
  // rank 0, which writes the report) and the machines this run spans.
  std::optional<Baseline> baseline;
  int nodes = 1;
};

Trainer::Trainer(TaskConfig config, Device device, Recipe& recipe, TrainerOptions options)
    : config_(std::move(config)), device_(device), recipe_(recipe), options_(std::move(options)) {
  if (!options_.clock) options_.clock = steady_seconds;
  if (!options_.stop_signal) options_.stop_signal = StopSignals::received;
  parts_ = std::make_unique<Parts>(config_, device_, options_.rank == 0 ? options_.progress_out : nullptr,
                                   options_.terminal, options_.clock);
}

absl::Status Trainer::read_baseline() {
  // Rank 0 reads it; the others learn its verdict.
  absl::Status status = absl::OkStatus();
  if (leader()) {
    absl::StatusOr<Baseline> baseline = load_baseline(config_.baseline_report(), config_);
    if (baseline.ok()) {
      parts_->baseline = *std::move(baseline);
    } else {
      status = baseline.status();
    }
  }
  return agree(std::move(status), absl::StrCat("reading baseline_report ", config_.baseline_report()));
}

absl::Status Trainer::agree(absl::Status mine, absl::string_view stage) {
  if (options_.comm == nullptr) return mine;
  absl::StatusOr<std::vector<double>> failed =
      collectives::allgather_values(*options_.comm, device_, {mine.ok() ? 0.0 : 1.0});
  // Once the vote is in, every rank ends with the error at this point.
  if (!mine.ok()) return failed.ok() ? shared_by_all_ranks(std::move(mine)) : mine;
  RETURN_IF_ERROR(failed.status());
  for (size_t rank = 0; rank < failed->size(); ++rank) {
    if ((*failed)[rank] != 0) {
      return shared_by_all_ranks(absl::AbortedError(
          absl::StrCat("rank ", rank, " failed ", stage, " (its own error says why); every rank stops with it")));
    }
  }
  return absl::OkStatus();
}

Trainer::~Trainer() = default;

std::string Trainer::report_path() const { return join_path(config_.output_dir(), "report.json"); }
std::string Trainer::checkpoint_path() const { return join_path(config_.checkpoint_dir(), "run_state.ckpt"); }

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::create(TaskConfig config, Device device, Recipe& recipe,
                                                         TrainerOptions options) {
  RETURN_IF_ERROR(validate_config(config));
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("trainer: rank ", options.rank, " is not in a world of size ", options.world_size));
  }
  std::unique_ptr<Trainer> t(new Trainer(std::move(config), device, recipe, std::move(options)));
  Parts& p = *t->parts_;
  const TaskConfig& c = t->config_;
  // Before training, so that a bad baseline does not end a long run at its
  // report.
  if (!c.baseline_report().empty()) RETURN_IF_ERROR(t->read_baseline());
  const Precision precision = precision_of(c);
  if (precision.mixed()) RETURN_IF_ERROR(optim::validate(loss_scaler_options(c)));
  // Process-wide, as the TF32 switch is (PrecisionStep sets that one).
  set_deterministic_algorithms(c.deterministic());
  RETURN_IF_ERROR(capture([&] {
    p.model = recipe.model();
    TS_CHECK(p.model != nullptr, "the recipe gave no model");
    precision.cast(*p.model);
    p.model->to(device);
    p.model->train();
  }));
  if (t->options_.comm != nullptr) {
    if (c.price_per_hour() > 0) {
      ASSIGN_OR_RETURN(p.nodes, count_nodes(*t->options_.comm, device));
    }
    collectives::ddp::DdpOptions ddp_options;
    if (precision.mixed() && c.reduce_gradients_in_f32()) ddp_options.reducer.wire_dtype = DType::kF32;
    ASSIGN_OR_RETURN(p.ddp, collectives::ddp::DistributedDataParallel::create(p.model, t->options_.comm, ddp_options));
    t->report_.extra("ddp")["backend"] = Json(std::string(t->options_.comm->backend_name()));
  }
  // After DDP has given every rank rank 0's weights: the masters start from
  // them.
  RETURN_IF_ERROR(capture([&] {
    p.precision = std::make_unique<PrecisionStep>(p.model, precision, loss_scaler_options(c));
    for (const auto& [name, param] : p.precision->optimized()) p.optimized.push_back(param);
    p.optimizer = make_optimizer(c, p.precision->optimized());
    p.lr.emplace(lr_control_options(c, t->options_.world_size, recipe.lr_scaling()));
  }));
  const TrainingData& data = recipe.data();
  ASSIGN_OR_RETURN(BatchSources sources, make_batch_sources(data, c, t->options_.world_size, t->options_.rank, device));
  p.train_batches = std::move(sources.train);
  p.eval_batches = std::move(sources.eval);
  if (t->steps_per_epoch() < 1) {
    return absl::InvalidArgumentError(absl::StrCat("trainer: ", p.train_batches->num_batches(), " training batches of ",
                                                   c.batch_size(), " make no step of ", c.gradient_accumulation_steps(),
                                                   " micro-batches on rank ", t->options_.rank));
  }
  t->report_.set("data", Json(data.description));
  t->report_.set("model", Json(absl::StrCat(p.model->type_name(), ", ", p.model->num_parameters(), " parameters")));
  return t;
}

std::vector<TimeToTarget*> Trainer::all_targets() {
  std::vector<TimeToTarget*> targets = {&*parts_->target};
  for (TimeToTarget& t : parts_->more_targets) targets.push_back(&t);
  return targets;
}

int64_t Trainer::steps_per_epoch() const {
  return parts_->train_batches->num_batches() / config_.gradient_accumulation_steps();
}

double Trainer::elapsed() const { return elapsed_before_ + (now() - session_start_); }

absl::Status Trainer::train_step(int64_t& samples, Tensor& loss) {
  Parts& p = *parts_;
  const int micro_steps = config_.gradient_accumulation_steps();
  samples = 0;
  Tensor loss_sum;
  double lr_factor_sum = 0;
  for (int micro = 0; micro < micro_steps; ++micro) {
    ASSIGN_OR_RETURN(std::optional<data::Batch> batch, p.train_batches->next());
    if (!batch) return absl::InternalError("the training loader ran out of batches within an epoch");
    const auto forward_backward = [&]() -> absl::Status {
      // Within no_sync()'s scope for the micro-steps that accumulate, as
      // PyTorch's forward runs inside it: those take no buffers from rank 0.
      if (p.ddp != nullptr) RETURN_IF_ERROR(p.ddp->begin_step());
      return capture([&] {
        const std::vector<Tensor> fields = fields_on(*batch, device_, p.precision->precision());
        const autograd::Variable micro_loss = recipe_.loss(fields);
        TS_CHECK(micro_loss.numel() == 1, "the recipe's loss is ", micro_loss.data().describe(), ", not one value");
        const autograd::Variable averaged =
            micro_steps > 1 ? micro_loss / static_cast<double>(micro_steps) : micro_loss;
        p.precision->backward(averaged);
        loss_sum = loss_sum.defined() ? loss_sum + micro_loss.data() : micro_loss.data();
      });
    };
    if (p.ddp != nullptr && micro + 1 < micro_steps) {
      // Only the last micro-batch's backward averages across ranks.
      const auto local_only = p.ddp->no_sync();
      RETURN_IF_ERROR(forward_backward());
    } else {
      RETURN_IF_ERROR(forward_backward());
    }
    ASSIGN_OR_RETURN(const int64_t batch_samples, capture([&] { return recipe_.samples_in(batch->fields); }));
    samples += batch_samples;
    lr_factor_sum += recipe_.lr_factor(batch->fields);
  }
  if (p.ddp != nullptr) RETURN_IF_ERROR(p.ddp->check_backward_complete());
  // Under mixed precision a step that overflowed is skipped (the scaler has
  // lowered the scale).
  ASSIGN_OR_RETURN(const bool take, p.precision->unscale(state_.global_step() + 1));
  return capture([&] {
    loss = micro_steps > 1 ? loss_sum / static_cast<double>(micro_steps) : loss_sum;
    if (!take) return;
    if (config_.grad_clip_norm() > 0) optim::clip_grad_norm_(p.optimized, config_.grad_clip_norm());
    // The step's lr times the recipe's factor (AWD-LSTM's window length over
    // bptt), for this step only.
    const double lr_factor = lr_factor_sum / micro_steps;
    std::vector<double> lrs;
    if (lr_factor != 1) {
      for (int g = 0; g < p.optimizer->num_groups(); ++g) {
        lrs.push_back(p.optimizer->lr(g));
        p.optimizer->set_lr(g, lrs.back() * lr_factor);
      }
    }
    p.optimizer->step();
    for (int g = 0; g < static_cast<int>(lrs.size()); ++g) p.optimizer->set_lr(g, lrs[g]);
    p.optimizer->zero_grad();
    p.precision->after_step();
  });
}

absl::Status Trainer::absorb() {
  Parts& p = *parts_;
  ASSIGN_OR_RETURN(const std::vector<TimedStep> times, p.step_clock.take());
  for (const TimedStep& s : times) {
    session_timed_.add(s.seconds, s.samples);
    if (p.step_times->record(s.seconds, s.samples)) session_counted_.add(s.seconds, s.samples);
  }
  ASSIGN_OR_RETURN(const std::vector<StepLoss> losses, capture([&] { return p.losses.read(); }));
  // Reading the losses waited for the device. A collective a watchdog
  // aborted meanwhile (NCCL) ended with a partial result and left steps
  // taken on it: fail here, before a checkpoint or report records them.
  if (options_.comm != nullptr) RETURN_IF_ERROR(options_.comm->health());
  // A rank's own losses (DDP keeps its gradients in step, not its losses)
  // and rank 0's event file: the ranks agree on the outcome.
  absl::Status taken = absl::OkStatus();
  for (const StepLoss& s : losses) {
    if (!std::isfinite(s.value)) {
      // Under mixed precision a forward that overflowed is a step the loss
      // scaler skipped (and stops the run if it keeps happening).
      if (p.precision->mixed() != nullptr) continue;
      taken = absl::InternalError(absl::StrCat("step ", s.global_step, ": the training loss is ", s.value));
      break;
    }
    state_.set_epoch_loss_sum(state_.epoch_loss_sum() + s.value * static_cast<double>(s.samples));
    state_.set_epoch_samples(state_.epoch_samples() + s.samples);
    p.loss_curve->add(s.global_step, s.run_seconds, s.value);
    last_loss_ = s.value;
    if (p.events != nullptr) {
      // The losses are read in batches (every 256 steps, or when progress
      // is due): each is stamped with its own step's wall time.
      taken = p.events->add_scalar("train/loss", s.value, s.global_step,
                                   session_start_wall_ + (s.run_seconds - elapsed_before_));
      if (!taken.ok()) break;
    }
  }
  // Out of the C library's buffer (about 85 losses) at once: TensorBoard
  // shows them as they are read, and a checkpoint, which follows a reading,
  // never holds steps that the event file lacks (after a crash the resumed
  // session's start drops what the file holds past the checkpoint, so
  // steps before it that never reached the file were lost).
  if (taken.ok() && p.events != nullptr) taken = p.events->flush();
  RETURN_IF_ERROR(agree(std::move(taken), "taking in its training losses"));
  if (p.ddp != nullptr) {
    ASSIGN_OR_RETURN(const absl::Duration wait, p.ddp->communication_wait_time());
    const double seconds = absl::ToDoubleSeconds(wait - p.reported_comm_wait);
    (*state_.mutable_time_buckets())["communication"] += seconds;
    p.step_times->record_communication(seconds);
    p.reported_comm_wait = wait;
  }
  return absl::OkStatus();
}

double Trainer::session_samples_per_second() const {
  const StepTotals& t = session_timing();
  return t.seconds > 0 ? static_cast<double>(t.samples) / t.seconds : 0;
}

absl::Status Trainer::show_progress(int64_t steps) {
  RETURN_IF_ERROR(absorb());
  if (!leader()) return absl::OkStatus();
  ProgressLine& progress = parts_->progress;
  int64_t remaining = (steps - state_.step_in_epoch()) + (config_.epochs() - state_.epoch() - 1) * steps;
  if (config_.max_steps() > 0) remaining = std::min(remaining, config_.max_steps() - state_.global_step());
  ProgressState s;
  s.epoch = state_.epoch() + 1;
  s.epochs = config_.epochs();
  s.step = state_.step_in_epoch();
  s.steps = steps;
  s.loss = state_.epoch_loss_sum() / static_cast<double>(std::max<int64_t>(state_.epoch_samples(), 1));
  s.unit = recipe_.sample_unit();
  s.samples_per_second = session_samples_per_second();
  s.eta_seconds = eta_seconds(session_timing().seconds, session_timing().steps, remaining);
  progress.update(s, now());
  return absl::OkStatus();
}

absl::StatusOr<Metrics> Trainer::evaluate(int epoch) {
  Parts& p = *parts_;
  autograd::NoGradGuard no_grad;
  p.model->eval();
  // Every rank evaluates the model rank 0 holds, running statistics
  // included, as PyTorch's DDP forward takes them at the first evaluation
  // forward: each rank's had moved by its own batches since the last step's.
  // First, before anything that can fail on one rank only: that rank would
  // go on to the vote below while the others waited in this broadcast.
  if (p.ddp != nullptr) RETURN_IF_ERROR(p.ddp->begin_step());
  // Every failure of this rank's own up to the sums' allreduce goes into
  // the one vote: a rank that left before it would pair its next
  // collective with the others' vote or allreduce.
  absl::Status status = p.eval_batches->start_epoch(epoch);
  std::map<std::string, Tensor> sums;
  // An averaged run evaluates its averages (as AWD-LSTM swaps them in); the
  // trained parameters come back after.
  std::vector<std::pair<Tensor, Tensor>> swapped;  // (parameter, its trained values)
  if (status.ok() && p.asgd != nullptr) {
    status = capture([&] {
      std::map<std::string, Tensor> params;
      for (const auto& [name, param] : p.model->named_parameters()) params.emplace(name, param.data());
      for (const auto& [name, average] : p.asgd->averages()) {
        const Tensor& param = params.at(name);
        swapped.emplace_back(param, clone(param));
        copy_(param, average);
      }
    });
  }
  while (status.ok()) {
    absl::StatusOr<std::optional<data::Batch>> batch = p.eval_batches->next();
    if (!batch.ok()) {
      status = batch.status();
      break;
    }
    if (!batch->has_value()) break;
    status = capture([&] {
      for (auto& [name, value] : recipe_.evaluate(fields_on(**batch, device_, p.precision->precision()))) {
        const Tensor v = to(value, DType::kF64);
        sums[name] = sums.contains(name) ? sums[name] + v : v;
      }
    });
  }
  p.model->train();
  // The trained parameters come back whatever happened.
  const absl::Status restored = capture([&] {
    for (auto& [param, trained] : swapped) copy_(param, trained);
  });
  if (status.ok()) status = restored;
  // One tensor of every sum (in name order, the same on every rank), summed
  // across ranks on the run's device, then read once.
  std::vector<std::string> names;
  Tensor packed;
  if (status.ok()) {
    status = capture([&] {
      std::vector<Tensor> values;
      for (const auto& [name, value] : sums) {
        names.push_back(name);
        values.push_back(reshape(value, {1}));
      }
      TS_CHECK(!values.empty(), "evaluation: the recipe gave no sums (no evaluation batch?)");
      packed = contiguous(cat(values, 0));
    });
  }
  RETURN_IF_ERROR(agree(std::move(status), "evaluating"));
  if (options_.comm != nullptr) {
    RETURN_IF_ERROR(options_.comm->allreduce(packed, collectives::ReduceOp::kSum).synchronize());
  }
  ASSIGN_OR_RETURN(const std::vector<double> totals, capture([&] { return to_vector<double>(packed); }));
  std::map<std::string, double> by_name;
  for (size_t i = 0; i < names.size(); ++i) by_name[names[i]] = totals[i];
  return capture([&] { return recipe_.metrics(by_name); });
}

absl::Status Trainer::finish_epoch(bool evaluate_now) {
  Parts& p = *parts_;
  EpochRecord& record = *state_.add_epochs();
  record.set_epoch(state_.epoch() + 1);
  record.set_steps(state_.step_in_epoch());
  record.set_train_loss(
      state_.epoch_samples() > 0 ? state_.epoch_loss_sum() / static_cast<double>(state_.epoch_samples()) : 0);
  record.set_lr(p.optimizer->lr(0));
  if (evaluate_now) {
    absl::StatusOr<Metrics> metrics = evaluate(state_.epoch());
    if (!metrics.ok()) {
      return with_context(metrics.status(), absl::StrCat("evaluation (epoch ", record.epoch(), ")"));
    }
    for (const TimeToTarget* target : all_targets()) {
      if (metrics->contains(target->metric())) continue;
      std::vector<std::string> names;
      for (const auto& [name, value] : *metrics) names.push_back(name);
      return absl::InvalidArgumentError(
          absl::StrCat("evaluation returned no '", target->metric(),
                       "' (config target_metric or more_targets); it returned: ", absl::StrJoin(names, ", ")));
    }
    if (config_.lr_schedule() == TaskConfig::PLATEAU) {
      if (!metrics->contains("loss")) {
        return absl::InvalidArgumentError(
            "the PLATEAU lr schedule follows the evaluated \"loss\", which the "
            "recipe does not report");
      }
      p.lr->end_epoch(metrics->at("loss"));
    }
    record.mutable_metrics()->insert(metrics->begin(), metrics->end());
    last_metrics_ = *metrics;
    RETURN_IF_ERROR(maybe_switch_to_asgd(record));
  }
  const double t = now();
  record.set_epoch_seconds(epoch_seconds_before_ + (t - epoch_session_start_));
  record.set_wall_seconds(elapsed());
  if (evaluate_now) {
    for (TimeToTarget* target : all_targets()) {
      target->observe(record.metrics().at(target->metric()),
                      {record.wall_seconds(), state_.steps().total_seconds(), record.epoch()});
    }
  }

  if (!leader()) return absl::OkStatus();
  std::string line =
      absl::StrCat("epoch ", record.epoch(), "/", config_.epochs(), " done: train_loss ", record.train_loss());
  const std::map<std::string, double> metrics(record.metrics().begin(), record.metrics().end());
  for (const auto& [name, value] : metrics) absl::StrAppend(&line, "  ", name, " ", value);
  absl::StrAppend(&line, "  lr ", record.lr(), "  ", format_duration(record.epoch_seconds()));
  p.progress.message(line);
  if (p.events != nullptr) {
    const int64_t step = state_.global_step();
    RETURN_IF_ERROR(p.events->add_scalar("train/epoch_loss", record.train_loss(), step));
    RETURN_IF_ERROR(p.events->add_scalar("train/lr", record.lr(), step));
    for (const auto& [name, value] : metrics) {
      RETURN_IF_ERROR(p.events->add_scalar(absl::StrCat("eval/", name), value, step));
    }
    RETURN_IF_ERROR(p.events->add_scalar("throughput/samples_per_s", session_samples_per_second(), step));
    RETURN_IF_ERROR(p.events->flush());
  }
  return absl::OkStatus();
}

absl::Status Trainer::maybe_switch_to_asgd(const EpochRecord& record) {
  const int nonmono = config_.sgd().nt_asgd_nonmono();
  if (nonmono <= 0 || state_.asgd_switch_epoch() > 0 || !config_.has_sgd()) return absl::OkStatus();
  if (!record.metrics().contains("loss")) {
    return absl::InvalidArgumentError(
        "sgd.nt_asgd_nonmono follows the evaluated \"loss\", which the recipe does not report");
  }
  // AWD-LSTM's test: more than nonmono earlier evaluations, and this loss
  // worse than the best of all of them but the last nonmono.
  std::vector<double> earlier;
  for (const EpochRecord& e : state_.epochs()) {
    if (&e != &record && e.metrics().contains("loss")) earlier.push_back(e.metrics().at("loss"));
  }
  if (static_cast<int>(earlier.size()) <= nonmono) return absl::OkStatus();
  const double best = *std::min_element(earlier.begin(), earlier.end() - nonmono);
  if (record.metrics().at("loss") <= best) return absl::OkStatus();
  RETURN_IF_ERROR(switch_to_asgd(record.epoch()));
  if (leader()) {
    parts_->progress.message(absl::StrCat("epoch ", record.epoch(), ": loss ", record.metrics().at("loss"),
                                          " is worse than the best before the last ", nonmono, " (", best,
                                          "): switching to averaged SGD"));
  }
  return absl::OkStatus();
}

absl::Status Trainer::switch_to_asgd(int epoch) {
  Parts& p = *parts_;
  ASSIGN_OR_RETURN(std::unique_ptr<optim::Asgd> asgd,
                   capture([&] { return make_nt_asgd(config_, p.precision->optimized()); }));
  // The schedule's lr for the epoch that follows (`epoch` counts from 1, so
  // it is that epoch's index), as MLBench steps its scheduler before it
  // builds ASGD: within a warm-up, the lr the run would have gone on with.
  asgd->set_lr(p.lr->lr(epoch));
  p.asgd = asgd.get();
  p.optimizer = std::move(asgd);
  state_.set_asgd_switch_epoch(epoch);
  report_.extra("nt_asgd")["switch_epoch"] = Json(epoch);
  return absl::OkStatus();
}

absl::Status Trainer::save_checkpoint() {
  ASSIGN_OR_RETURN(const nn::NamedTensors recipe_state, capture([&] { return recipe_.state(); }));
  ASSIGN_OR_RETURN(const nn::NamedTensors ranks_state, gather_ranks_state(options_.comm, recipe_state));
  return agree(leader() ? write_checkpoint(ranks_state) : absl::OkStatus(), "writing the checkpoint");
}

absl::Status Trainer::write_checkpoint(const nn::NamedTensors& ranks_state) {
  Parts& p = *parts_;
  state_.set_elapsed_seconds(elapsed());
  state_.set_epoch_seconds(epoch_seconds_before_ + (now() - epoch_session_start_));
  *state_.mutable_shape() = run_shape();
  state_.set_config(config_.SerializeAsString());
  state_.set_cpu_threads(cpu::num_threads());
  state_.clear_ddp_bucket_order();
  if (p.ddp != nullptr) {
    if (const std::optional<std::vector<int>> order = p.ddp->bucket_fill_order()) {
      state_.mutable_ddp_bucket_order()->Add(order->begin(), order->end());
    }
  }
  const Generator::State g = default_generator().state();
  state_.mutable_generator()->set_seed(g.seed);
  state_.mutable_generator()->set_offset(g.offset);
  StateBlobs blobs;
  ASSIGN_OR_RETURN(blobs["model"], nn::encode_tensors(p.model->state_dict()));
  ASSIGN_OR_RETURN(blobs["optimizer"], nn::encode_tensors(p.optimizer->state()));
  ASSIGN_OR_RETURN(blobs["lr"], nn::encode_tensors(p.lr->state()));
  ASSIGN_OR_RETURN(blobs["recipe"], nn::encode_tensors(ranks_state));
  if (const optim::MixedPrecision* mixed = p.precision->mixed()) {
    ASSIGN_OR_RETURN(blobs["mixed_precision"], nn::encode_tensors(mixed->state()));
  }
  RETURN_IF_ERROR(make_dirs(config_.checkpoint_dir()));
  return save_run_state(checkpoint_path(), state_, blobs);
}

RunShape Trainer::run_shape() const {
  RunShape shape;
  shape.set_world_size(options_.world_size);
  shape.set_batch_size(config_.batch_size());
  shape.set_gradient_accumulation_steps(config_.gradient_accumulation_steps());
  shape.set_seed(config_.seed());
  const TrainingData& data = recipe_.data();
  shape.set_train_examples(data.train != nullptr ? data.train->size() : 0);
  return shape;
}

absl::Status Trainer::restore() {
  Parts& p = *parts_;
  absl::StatusOr<RunCheckpoint> loaded = load_run_state(checkpoint_path());
  if (absl::IsNotFound(loaded.status())) {
    return absl::NotFoundError(absl::StrCat("--resume: no checkpoint at ", checkpoint_path()));
  }
  RETURN_IF_ERROR(loaded.status());
  state_ = std::move(loaded->state);
  const auto& blobs = loaded->blobs;
  const auto in_context = [&](const absl::Status& s) {
    return with_context(s, absl::StrCat("restoring from ", checkpoint_path()));
  };
  if (state_.has_shape()) {
    if (absl::Status s = check_resumable(state_.shape(), run_shape()); !s.ok()) return in_context(s);
  }
  if (absl::Status s = check_same_target(state_.target(), "target_metric", config_.target_metric(),
                                         config_.target_value(), config_.target_minimize());
      !s.ok()) {
    return in_context(s);
  }
  if (state_.more_targets_size() > 0 && state_.more_targets_size() != config_.more_targets_size()) {
    return in_context(absl::FailedPreconditionError(
        absl::StrCat("the checkpoint times ", state_.more_targets_size(), " more_targets and this run has ",
                     config_.more_targets_size(), "; a run resumes with the targets it was written with")));
  }
  for (int i = 0; i < state_.more_targets_size(); ++i) {
    const TaskConfig::Target& t = config_.more_targets(i);
    if (absl::Status s = check_same_target(state_.more_targets(i), absl::StrCat("more_targets[", i, "]"), t.metric(),
                                           t.value(), t.minimize());
        !s.ok()) {
      return in_context(s);
    }
  }
  if (!state_.config().empty()) {
    TaskConfig saved;
    if (!saved.ParseFromString(state_.config())) {
      return in_context(absl::DataLossError("the checkpoint's config does not parse"));
    }
    if (const std::string differences = config_differences(saved, config_, kMayChangeOnResume, kTaskWhereFields);
        !differences.empty()) {
      return in_context(absl::FailedPreconditionError(absl::StrCat(
          "the checkpoint was written by a run of another config (", differences,
          "); a run resumes with the config it was written with, changing only where it runs and for how long (",
          absl::StrJoin(kMayChangeOnResume, ", "), "; a task's ", absl::StrJoin(kTaskWhereFields, ", "),
          "): start a new run, in another checkpoint_dir, to change more")));
    }
  }
  const auto blob = [&](const char* key) -> absl::StatusOr<nn::NamedTensors> {
    const auto it = blobs.find(key);
    if (it == blobs.end()) {
      return in_context(absl::DataLossError(absl::StrCat("checkpoint has no \"", key, "\" state")));
    }
    absl::StatusOr<nn::NamedTensors> tensors =
        nn::decode_tensors(it->second, absl::StrCat("checkpoint ", key, " state"));
    if (!tensors.ok()) return in_context(tensors.status());
    return tensors;
  };
  ASSIGN_OR_RETURN(const nn::NamedTensors model_state, blob("model"));
  if (absl::Status s = p.model->load_state_dict(model_state); !s.ok()) return in_context(s);
  if (p.ddp != nullptr && state_.ddp_bucket_order_size() > 0) {
    absl::Status s =
        p.ddp->restore_bucket_fill_order({state_.ddp_bucket_order().begin(), state_.ddp_bucket_order().end()});
    if (!s.ok()) return in_context(s);
  }
  if (optim::MixedPrecision* mixed = p.precision->mixed()) {
    ASSIGN_OR_RETURN(const nn::NamedTensors mixed_state, blob("mixed_precision"));
    if (absl::Status s = mixed->load_state(mixed_state); !s.ok()) return in_context(s);
  }
  // A run saved after NT-ASGD's switch resumes averaging.
  if (state_.asgd_switch_epoch() > 0) RETURN_IF_ERROR(switch_to_asgd(state_.asgd_switch_epoch()));
  ASSIGN_OR_RETURN(const nn::NamedTensors optimizer_state, blob("optimizer"));
  if (absl::Status s = p.optimizer->load_state(optimizer_state); !s.ok()) return in_context(s);
  ASSIGN_OR_RETURN(const nn::NamedTensors lr_state, blob("lr"));
  if (absl::Status s = p.lr->load_state(lr_state); !s.ok()) return in_context(s);
  ASSIGN_OR_RETURN(const nn::NamedTensors ranks_state, blob("recipe"));
  absl::StatusOr<nn::NamedTensors> recipe_state = ranks_part(ranks_state, options_.rank, options_.world_size);
  if (!recipe_state.ok()) return in_context(recipe_state.status());
  RETURN_IF_ERROR(capture([&] {
    for (auto& [name, value] : *recipe_state) value = to(value, device_);
  }));
  if (absl::Status s = recipe_.load_state(*recipe_state); !s.ok()) return in_context(s);
  default_generator().set_state({state_.generator().seed(), state_.generator().offset()});
  if (leader() && device_.is_cpu() && state_.cpu_threads() != 0 && state_.cpu_threads() != cpu::num_threads()) {
    p.progress.message(absl::StrCat("note: resuming on ", cpu::num_threads(),
                                    " CPU threads; the checkpoint was written on ", state_.cpu_threads(),
                                    ": the run goes on, but its bits will not repeat the uninterrupted run's ",
                                    "(oneDNN's and OpenBLAS's sums split by thread; OMP_NUM_THREADS sets the count)"));
  }
  elapsed_before_ = state_.elapsed_seconds();
  epoch_seconds_before_ = state_.epoch_seconds();
  resumed_ = true;
  return absl::OkStatus();
}

absl::Status Trainer::check_ranks_restored_alike() {
  if (options_.comm == nullptr) return absl::OkStatus();
  // Integers travel exactly up to 2^53; the run time, an f64 of its own,
  // tells apart two files of the same step.
  const std::vector<double> mine = {static_cast<double>(state_.global_step()), static_cast<double>(state_.epoch()),
                                    state_.elapsed_seconds(), static_cast<double>(state_.generator().offset())};
  ASSIGN_OR_RETURN(const std::vector<double> all, collectives::allgather_values(*options_.comm, device_, mine));
  const size_t n = mine.size();
  for (size_t rank = 1; rank * n < all.size(); ++rank) {
    if (!std::equal(all.begin() + rank * n, all.begin() + (rank + 1) * n, all.begin())) {
      return shared_by_all_ranks(absl::FailedPreconditionError(absl::StrCat(
          "--resume: rank ", rank, " restored another run than rank 0 from ", checkpoint_path(), " (step ",
          all[rank * n], ", epoch ", all[rank * n + 1], ", ", all[rank * n + 2], " s against step ", all[0], ", epoch ",
          all[1], ", ", all[2], " s): checkpoint_dir must be one directory every rank reads, as rank 0 writes it")));
    }
  }
  return absl::OkStatus();
}

Json Trainer::time_breakdown() const {
  Json breakdown = Json::object();
  breakdown["step_seconds_total"] = state_.steps().total_seconds();
  Json buckets = Json::object();
  double fed = 0;
  const std::map<std::string, double> sorted(state_.time_buckets().begin(), state_.time_buckets().end());
  for (const auto& [name, seconds] : sorted) {
    buckets[name] = seconds;
    fed += seconds;
  }
  breakdown["buckets"] = std::move(buckets);
  // Step time no bucket claims: compute, data loading, host overhead.
  breakdown["other_seconds"] = state_.steps().total_seconds() - fed;
  breakdown["per_step"] = parts_->step_times->per_step_json();
  return breakdown;
}

Json Trainer::price_figures(double elapsed_seconds) const {
  RunCost cost;
  cost.price_per_hour = config_.price_per_hour();
  cost.nodes = parts_->nodes;
  cost.elapsed_seconds = elapsed_seconds;
  if (state_.target().reached()) cost.seconds_to_target = state_.target().seconds();
  return price_json(cost, parts_->baseline);
}

absl::Status Trainer::write_report() {
  if (!leader()) return absl::OkStatus();
  Parts& p = *parts_;
  const double elapsed_seconds = elapsed();
  report_.set_epochs(state_.epochs());
  Json throughput = p.step_times->to_json(options_.world_size);
  throughput["unit"] = recipe_.sample_unit();  // what "samples" counts
  report_.set("throughput", std::move(throughput));
  report_.set("time_to_target", p.target->to_json());
  Json more = Json::array();
  for (const TimeToTarget& target : p.more_targets) more.push_back(target.to_json());
  report_.set("more_targets", std::move(more));
  report_.set("time_breakdown", time_breakdown());
  report_.set("scaling",
              p.baseline ? scaling_json(*p.baseline, options_.world_size, p.step_times->samples_per_second()) : Json());
  report_.set("price", config_.price_per_hour() > 0 ? price_figures(elapsed_seconds) : Json());
  if (const TrainingData& data = recipe_.data(); data.statistics) report_.extra("data") = data.statistics();
  if (const optim::MixedPrecision* mixed = p.precision->mixed()) {
    Json& json = report_.extra("mixed_precision");
    json["dtype"] = std::string(dtype_name(p.precision->precision().dtype));
    json["loss_scale"] = mixed->scaler().scale();
    json["skipped_steps"] = mixed->scaler().skipped_steps();
  }
  Json curves = Json::object();
  curves["train_loss"] = p.loss_curve->to_json();
  report_.set("curves", std::move(curves));
  Json run = Json::object();
  run["epochs_completed"] = state_.epochs_size();
  run["global_step"] = state_.global_step();
  run["elapsed_seconds"] = elapsed_seconds;
  run["resumed"] = resumed_;
  // Under mpirun a Ctrl-C can cost the ranks' last line; the report keeps it.
  run["stopped_by_signal"] = stopped_by_signal_ != 0 ? Json(std::string(strsignal(stopped_by_signal_))) : Json();
  report_.set("run", std::move(run));
  RETURN_IF_ERROR(make_dirs(config_.output_dir()));
  return report_.write(report_path());
}

absl::Status Trainer::stop_for(int signal) {
  Parts& p = *parts_;
  const bool checkpoints = !config_.checkpoint_dir().empty();
  stopped_by_signal_ = signal;
  p.step_clock.pause();
  RETURN_IF_ERROR(absorb());
  if (checkpoints) RETURN_IF_ERROR(save_checkpoint());
  absl::Status written = absl::OkStatus();
  if (leader()) {
    p.progress.finish();
    written = p.events->flush();
    if (written.ok()) written = write_report();
  }
  RETURN_IF_ERROR(agree(std::move(written), "writing the report"));
  // Every rank stops at this step with this line; rank 0 says it.
  return said_by_rank_0(
      leader(), absl::CancelledError(absl::StrCat(
                    "stopped by signal ", signal, " (", strsignal(signal), ") after step ", state_.step_in_epoch(),
                    " of epoch ", state_.epoch() + 1, " (global step ", state_.global_step(), "); ",
                    checkpoints ? absl::StrCat("--resume continues it from ", checkpoint_path())
                                : "without a checkpoint_dir nothing can resume it")));
}

absl::StatusOr<RunSummary> Trainer::run() {
  Parts& p = *parts_;
  const bool checkpoints = !config_.checkpoint_dir().empty();
  const auto open_outputs = [&]() -> absl::Status {
    // A new run would replace the run a checkpoint holds at its first save:
    // it is continued (--resume) or moved out of the way by the user.
    if (checkpoints && !config_.resume()) {
      struct stat st;
      if (::stat(checkpoint_path().c_str(), &st) == 0) {
        return absl::AlreadyExistsError(
            absl::StrCat(checkpoint_path(), " holds the checkpoint of an earlier run: --resume continues that run; to ",
                         "start a new one, give another --checkpoint_dir or remove the file"));
      }
      // ENOTDIR: checkpoint_dir is a file, which the check below names.
      if (errno != ENOENT && errno != ENOTDIR) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot tell whether ", checkpoint_path(), " holds a checkpoint: ", std::strerror(errno)));
      }
    }
    RETURN_IF_ERROR(make_dirs(config_.output_dir()));
    if (checkpoints) {
      // Now rather than at the first save, after minutes of training.
      if (absl::Status s = check_can_write(checkpoint_path()); !s.ok()) {
        return with_context(s, absl::StrCat("checkpoint_dir ", config_.checkpoint_dir()));
      }
      // A checkpoint write the last session was killed in left its partial
      // copy (as large as a checkpoint) beside it.
      RETURN_IF_ERROR(remove_atomic_leftovers(checkpoint_path()).status());
    }
    ASSIGN_OR_RETURN(p.events, EventWriter::create(join_path(config_.output_dir(), "tensorboard")));
    report_.set("config", config_to_json(config_));
    report_.set("environment", describe_environment(device_).to_json());
    Json world = Json::object();
    world["size"] = options_.world_size;
    world["rank"] = options_.rank;
    report_.set("world", std::move(world));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(agree(leader() ? open_outputs() : absl::OkStatus(), "opening the output directory"));
  session_start_ = now();
  session_start_wall_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (config_.resume()) {
    RETURN_IF_ERROR(agree(restore(), "restoring the checkpoint"));
    RETURN_IF_ERROR(check_ranks_restored_alike());
    RETURN_IF_ERROR(agree(leader() ? p.events->add_session_start(state_.global_step() + 1) : absl::OkStatus(),
                          "writing the event file"));
  }
  p.step_times.emplace(state_.mutable_steps(), config_.warmup_steps());
  p.target.emplace(config_.target_metric(), config_.target_value(), config_.target_minimize(), state_.mutable_target());
  // Each state exists before any is pointed at (a repeated field's elements
  // stay put once added); a resumed run has them already.
  while (state_.more_targets_size() < config_.more_targets_size()) state_.add_more_targets();
  for (int i = 0; i < config_.more_targets_size(); ++i) {
    const TaskConfig::Target& t = config_.more_targets(i);
    p.more_targets.emplace_back(t.metric(), t.value(), t.minimize(), state_.mutable_more_targets(i));
  }
  p.loss_curve.emplace(state_.mutable_train_loss());
  CheckpointSchedule schedule(config_.checkpoint_interval_minutes(), now());
  // What is due after a step. Ranks take in their losses (and save)
  // together, so on several ranks they decide every kVoteSteps steps, in one
  // allgather: rank 0's clock, any rank's stop signal.
  struct Due {
    bool progress = false;
    bool checkpoint = false;
    int stop_signal = 0;  // any rank's
  };
  const auto due_now = [&]() -> absl::StatusOr<Due> {
    const Due mine{leader() && p.progress.due(now()), checkpoints && schedule.due(now()), options_.stop_signal()};
    if (options_.comm == nullptr) return mine;
    if (state_.global_step() % kVoteSteps != 0) return Due{};
    ASSIGN_OR_RETURN(const std::vector<double> all,
                     collectives::allgather_values(*options_.comm, device_,
                                                   {(mine.progress ? 1.0 : 0.0) + (mine.checkpoint ? 2.0 : 0.0),
                                                    static_cast<double>(mine.stop_signal)}));
    const int rank0 = static_cast<int>(all[0]);
    Due due{(rank0 & 1) != 0, (rank0 & 2) != 0};
    for (size_t i = 1; i < all.size() && due.stop_signal == 0; i += 2) due.stop_signal = static_cast<int>(all[i]);
    return due;
  };
  const int64_t max_steps = config_.max_steps();
  const auto out_of_steps = [&] { return max_steps > 0 && state_.global_step() >= max_steps; };
  const auto at_target = [&] { return config_.stop_at_target() && p.target->reached(); };
  while (state_.epoch() < config_.epochs() && !out_of_steps() && !at_target()) {
    const int epoch = state_.epoch();
    if (state_.step_in_epoch() == 0) {
      state_.set_epoch_loss_sum(0);
      state_.set_epoch_samples(0);
      epoch_seconds_before_ = 0;
    }
    epoch_session_start_ = now();
    const int64_t micro_batches_done = state_.step_in_epoch() * config_.gradient_accumulation_steps();
    if (absl::Status s = p.train_batches->start_epoch(epoch, micro_batches_done); !s.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("checkpoint is at step ", state_.step_in_epoch(), " of epoch ",
                                                        epoch + 1, ", which has only ", steps_per_epoch(),
                                                        " steps now (", s.message(), ")"));
    }
    // Per epoch: a source with random window lengths has its own count each.
    const int64_t steps = steps_per_epoch();

    while (state_.step_in_epoch() < steps && !out_of_steps()) {
      // Both counted from 1, as the mixed-precision step number in its errors.
      const std::string where = absl::StrCat("epoch ", epoch + 1, ", step ", state_.step_in_epoch() + 1, " of ", steps);
      // Set at every step (a per-step warm-up rises within the epoch).
      // Averaged SGD keeps the lr it took over with, as awd-lstm-lm's and
      // MLBench's do ("no scheduling" after the switch).
      if (p.asgd == nullptr) {
        p.optimizer->set_lr(p.lr->lr(epoch, static_cast<double>(state_.step_in_epoch()) / static_cast<double>(steps)));
      }
      int64_t samples = 0;
      Tensor loss;
      RETURN_IF_ERROR(p.step_clock.start());
      if (absl::Status s = train_step(samples, loss); !s.ok()) {
        return with_context(s, absl::StrCat("train step (", where, ")"));
      }
      RETURN_IF_ERROR(p.step_clock.stop(samples));
      state_.set_step_in_epoch(state_.step_in_epoch() + 1);
      state_.set_global_step(state_.global_step() + 1);
      ++session_steps_;
      p.losses.add(state_.global_step(), samples, elapsed(), std::move(loss));
      if (p.ddp != nullptr && session_steps_ == config_.warmup_steps()) {
        // DDP's communication time is read as the warm-up ends, so that no
        // reading mixes warm-up and counted steps.
        p.step_clock.pause();
        RETURN_IF_ERROR(absorb());
      }
      // A bound on what waits on the device (and on how late a NaN is seen).
      if (p.losses.size() >= 256) RETURN_IF_ERROR(absorb());
      ASSIGN_OR_RETURN(const Due due, due_now());
      if (due.stop_signal != 0) return stop_for(due.stop_signal);  // saves its own checkpoint
      if (due.progress) RETURN_IF_ERROR(show_progress(steps));
      if (due.checkpoint) {
        p.step_clock.pause();
        RETURN_IF_ERROR(absorb());
        RETURN_IF_ERROR(save_checkpoint());
        schedule.saved(now());
      }
    }
    p.step_clock.pause();
    RETURN_IF_ERROR(absorb());
    if (state_.step_in_epoch() < steps) break;  // max_steps stopped it mid-epoch

    // On the schedule only: max_steps ending an epoch off it evaluates no
    // more than a stop mid-epoch does, since the evaluation would feed the lr
    // schedule, NT-ASGD and the targets, and a resumed run would then differ
    // from one that was never stopped.
    const bool scheduled = epoch + 1 == config_.epochs() || (epoch + 1) % config_.eval_every_epochs() == 0;
    RETURN_IF_ERROR(agree(finish_epoch(scheduled), absl::StrCat("finishing epoch ", epoch + 1)));
    state_.set_epoch(epoch + 1);
    state_.set_step_in_epoch(0);
    if (checkpoints) {
      RETURN_IF_ERROR(save_checkpoint());
      schedule.saved(now());
    }
    // The report so far, so that a run killed later keeps its record.
    RETURN_IF_ERROR(agree(write_report(), "writing the report"));
    if (at_target() && leader()) {
      p.progress.message(absl::StrCat("epoch ", epoch + 1, ": ", p.target->metric(),
                                      " reached its target; stopping (stop_at_target)"));
    }
  }
  // A run stopped mid-epoch by max_steps can be continued with --resume.
  if (checkpoints && state_.step_in_epoch() > 0) RETURN_IF_ERROR(save_checkpoint());
  if (leader()) {
    p.progress.finish();
    RETURN_IF_ERROR(p.events->flush());
    RETURN_IF_ERROR(write_report());
    // The last line: what the run did and where its record is, also for a
    // run too short for a progress line (DDP votes on one every 16th step).
    p.progress.message(absl::StrCat("done: global step ", state_.global_step(), ", ", state_.epochs_size(), " of ",
                                    config_.epochs(), " epochs; ", p.target->summary(), "; report ", report_path()));
  }
  p.events.reset();

  RunSummary summary;
  summary.epochs_completed = state_.epochs_size();
  summary.global_step = state_.global_step();
  summary.elapsed_seconds = elapsed();
  summary.last_loss = last_loss_;
  summary.last_metrics = last_metrics_;
  summary.target_reached = p.target->reached();
  summary.resumed = resumed_;
  return summary;
}

}  // namespace ts::tasks
