#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::optim {
namespace {

void check_lr(const char* schedule, const char* field, double lr) {
  TS_CHECK(std::isfinite(lr) && lr >= 0, schedule, ": ", field, " must be finite and >= 0, got ", lr);
}

void check_gamma(const char* schedule, double gamma) {
  TS_CHECK(std::isfinite(gamma) && gamma > 0, schedule, ": gamma must be finite and > 0, got ", gamma);
}

// The linear warm-up shared by linear_warmup and the plateau schedule.
double warmup_lr(double start_lr, double target_lr, double t, int64_t length) {
  const double progress = t / static_cast<double>(length);
  return progress * target_lr + (1 - progress) * start_lr;
}

class ConstantLr final : public LrSchedule {
 public:
  explicit ConstantLr(double lr) : lr_(lr) {}
  double get_lr(double) const override { return lr_; }

 private:
  double lr_;
};

class StepLr final : public LrSchedule {
 public:
  StepLr(double base_lr, int64_t step_size, double gamma) : base_lr_(base_lr), step_size_(step_size), gamma_(gamma) {}
  double get_lr(double t) const override {
    return base_lr_ * std::pow(gamma_, std::floor(std::max(t, 0.0) / static_cast<double>(step_size_)));
  }

 private:
  double base_lr_;
  int64_t step_size_;
  double gamma_;
};

class MultiStepLr final : public LrSchedule {
 public:
  MultiStepLr(double base_lr, std::vector<int64_t> milestones, double gamma)
      : base_lr_(base_lr), milestones_(std::move(milestones)), gamma_(gamma) {}
  double get_lr(double t) const override {
    t = std::max(t, 0.0);
    const auto passed =
        std::upper_bound(milestones_.begin(), milestones_.end(), t,
                         [](double value, int64_t milestone) { return value < static_cast<double>(milestone); }) -
        milestones_.begin();
    return base_lr_ * std::pow(gamma_, static_cast<double>(passed));
  }

 private:
  double base_lr_;
  std::vector<int64_t> milestones_;
  double gamma_;
};

class CosineLr final : public LrSchedule {
 public:
  CosineLr(double base_lr, int64_t start, int64_t end, double min_lr)
      : base_lr_(base_lr), start_(start), end_(end), min_lr_(min_lr) {}
  double get_lr(double t) const override {
    if (t <= static_cast<double>(start_)) return base_lr_;
    if (t >= static_cast<double>(end_)) return min_lr_;
    const double progress = (t - static_cast<double>(start_)) / static_cast<double>(end_ - start_);
    return min_lr_ + (base_lr_ - min_lr_) * (1 + std::cos(std::numbers::pi * progress)) / 2;
  }

 private:
  double base_lr_;
  int64_t start_, end_;
  double min_lr_;
};

class LinearWarmup final : public LrSchedule {
 public:
  LinearWarmup(double start_lr, int64_t length, std::unique_ptr<LrSchedule> main)
      : start_lr_(start_lr), length_(length), main_(std::move(main)) {}
  double get_lr(double t) const override {
    t = std::max(t, 0.0);
    if (t >= static_cast<double>(length_)) return main_->get_lr(t);
    return warmup_lr(start_lr_, main_->get_lr(static_cast<double>(length_)), t, length_);
  }

 private:
  double start_lr_;
  int64_t length_;
  std::unique_ptr<LrSchedule> main_;
};

}  // namespace

std::unique_ptr<LrSchedule> constant_lr(double lr) { return std::make_unique<ConstantLr>(lr); }

std::unique_ptr<LrSchedule> step_lr(double base_lr, int64_t step_size, double gamma) {
  check_lr("step_lr", "base_lr", base_lr);
  check_gamma("step_lr", gamma);
  TS_CHECK(step_size > 0, "step_lr: step_size must be > 0, got ", step_size);
  return std::make_unique<StepLr>(base_lr, step_size, gamma);
}

std::unique_ptr<LrSchedule> multi_step_lr(double base_lr, std::vector<int64_t> milestones, double gamma) {
  check_lr("multi_step_lr", "base_lr", base_lr);
  check_gamma("multi_step_lr", gamma);
  TS_CHECK(std::is_sorted(milestones.begin(), milestones.end()), "multi_step_lr: milestones must be non-decreasing");
  return std::make_unique<MultiStepLr>(base_lr, std::move(milestones), gamma);
}

std::unique_ptr<LrSchedule> cosine_lr(double base_lr, int64_t start, int64_t end, double min_lr) {
  check_lr("cosine_lr", "base_lr", base_lr);
  check_lr("cosine_lr", "min_lr", min_lr);
  TS_CHECK(start >= 0 && end > start, "cosine_lr: needs 0 <= start < end, got start ", start, " and end ", end);
  return std::make_unique<CosineLr>(base_lr, start, end, min_lr);
}

std::unique_ptr<LrSchedule> linear_warmup(double start_lr, int64_t length, std::unique_ptr<LrSchedule> main) {
  check_lr("linear_warmup", "start_lr", start_lr);
  TS_CHECK(length >= 0, "linear_warmup: length must be >= 0, got ", length);
  TS_CHECK(main != nullptr, "linear_warmup: no main schedule");
  return std::make_unique<LinearWarmup>(start_lr, length, std::move(main));
}

double scale_lr(double base_lr, int64_t workers, LrScaling rule) {
  check_lr("scale_lr", "base_lr", base_lr);
  TS_CHECK(workers >= 1, "scale_lr: workers must be >= 1, got ", workers);
  switch (rule) {
    case LrScaling::kNone:
      return base_lr;
    case LrScaling::kLinear:
      return base_lr * static_cast<double>(workers);
    case LrScaling::kSqrt:
      return base_lr * std::sqrt(static_cast<double>(workers));
  }
  throw_error(absl::StatusCode::kInvalidArgument, "scale_lr: unknown rule ", static_cast<int>(rule));
}

int64_t mlbench_warmup_epochs(int64_t workers, LrScaling rule) {
  if (workers < 2 || rule == LrScaling::kNone) return 0;
  if (rule == LrScaling::kSqrt) return 3 * workers;
  int64_t epochs = 0;
  while (workers >= 2) {
    workers /= 2;
    ++epochs;
  }
  return epochs;
}

// ---- ReduceLrOnPlateau

ReduceLrOnPlateau::ReduceLrOnPlateau(double lr, PlateauOptions options, PlateauWarmup warmup)
    : options_(options),
      warmup_(warmup),
      target_lr_(lr),
      lr_(warmup.epochs > 0 ? warmup.start_lr : lr),
      best_(options.mode == PlateauOptions::Mode::kMin ? std::numeric_limits<double>::infinity()
                                                       : -std::numeric_limits<double>::infinity()) {
  const char* name = "ReduceLrOnPlateau";
  check_lr(name, "lr", lr);
  check_lr(name, "min_lr", options.min_lr);
  TS_CHECK(options.factor > 0 && options.factor < 1, name, ": factor must be in (0, 1), got ", options.factor);
  TS_CHECK(options.patience >= 0 && options.cooldown >= 0, name, ": patience and cooldown must be >= 0, got ",
           options.patience, " and ", options.cooldown);
  TS_CHECK(std::isfinite(options.threshold) && options.threshold >= 0 && std::isfinite(options.eps) && options.eps >= 0,
           name, ": threshold and eps must be finite and >= 0, got ", options.threshold, " and ", options.eps);
  TS_CHECK(warmup.epochs >= 0, name, ": warmup epochs must be >= 0, got ", warmup.epochs);
  check_lr(name, "warmup start_lr", warmup.start_lr);
}

bool ReduceLrOnPlateau::is_better(double metric) const {
  const bool rel = options_.threshold_mode == PlateauOptions::ThresholdMode::kRel;
  if (options_.mode == PlateauOptions::Mode::kMin) {
    return metric < (rel ? best_ * (1 - options_.threshold) : best_ - options_.threshold);
  }
  return metric > (rel ? best_ * (1 + options_.threshold) : best_ + options_.threshold);
}

double ReduceLrOnPlateau::step(double metric) {
  ++epochs_;
  if (epochs_ <= warmup_.epochs) {
    lr_ = warmup_lr(warmup_.start_lr, target_lr_, static_cast<double>(epochs_), warmup_.epochs);
    return lr_;
  }
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > options_.patience) {
    const double reduced = std::max(lr_ * options_.factor, options_.min_lr);
    if (lr_ - reduced > options_.eps) lr_ = reduced;
    cooldown_counter_ = options_.cooldown;
    num_bad_epochs_ = 0;
  }
  return lr_;
}

NamedTensors ReduceLrOnPlateau::state() const {
  NamedTensors out;
  for (auto [name, value] : {std::pair<const char*, double>{"lr", lr_}, {"best", best_}}) {
    out.emplace_back(name, scalar_tensor(value, {DType::kF64}));
  }
  for (auto [name, value] : {std::pair<const char*, int64_t>{"epochs", epochs_},
                             {"num_bad_epochs", num_bad_epochs_},
                             {"cooldown_counter", cooldown_counter_}}) {
    out.emplace_back(name, scalar_tensor(value, {DType::kI64}));
  }
  return out;
}

absl::Status ReduceLrOnPlateau::load_state(const NamedTensors& state) {
  ASSIGN_OR_RETURN(StateReader reader, StateReader::create(state, "ReduceLrOnPlateau.load_state"));
  ASSIGN_OR_RETURN(const double lr, reader.take_f64("lr"));
  ASSIGN_OR_RETURN(const double best, reader.take_f64("best"));
  ASSIGN_OR_RETURN(const int64_t epochs, reader.take_i64("epochs"));
  ASSIGN_OR_RETURN(const int64_t num_bad_epochs, reader.take_i64("num_bad_epochs"));
  ASSIGN_OR_RETURN(const int64_t cooldown_counter, reader.take_i64("cooldown_counter"));
  RETURN_IF_ERROR(reader.finish());
  if (!std::isfinite(lr) || lr < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReduceLrOnPlateau.load_state: entry \"lr\" must be finite and >= 0, got ", lr));
  }
  for (const auto& [entry, value] : {std::pair<const char*, int64_t>{"epochs", epochs},
                                     {"num_bad_epochs", num_bad_epochs},
                                     {"cooldown_counter", cooldown_counter}}) {
    if (value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ReduceLrOnPlateau.load_state: entry \"", entry, "\" must be >= 0, got ", value));
    }
  }
  lr_ = lr;
  best_ = best;
  epochs_ = epochs;
  num_bad_epochs_ = num_bad_epochs;
  cooldown_counter_ = cooldown_counter;
  return absl::OkStatus();
}

}  // namespace ts::optim
