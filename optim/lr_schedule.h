// Learning-rate schedules. Closed-form ones give the lr as a function of a
// count t (epochs or steps: the caller's unit, and a fraction of one for a
// point inside it; their only state is t, which the caller checkpoints), and
// compose with a linear warm-up. Reduce-on-
// plateau follows a validation metric, so it carries state to save. The
// scaling rules say what lr k workers use (Goyal et al.'s linear rule, or the
// square-root rule of MLBench's LSTM task).
//
// Errors: as everywhere in optim/, invalid arguments throw ts::Error naming
// the schedule and the field, though they often come from a config file:
// config code that needs a Status wraps the construction in ts::capture.
// Only load_state, whose input is read from a checkpoint, returns a Status.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "optim/named_state.h"

namespace ts::optim {

class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  // The lr for count t; t < 0 counts as 0.
  virtual double get_lr(double t) const = 0;
};

// constant_lr takes any lr; the other factories check their arguments.
std::unique_ptr<LrSchedule> constant_lr(double lr);
// base_lr * gamma^floor(t / step_size), as torch's StepLR.
std::unique_ptr<LrSchedule> step_lr(double base_lr, int64_t step_size, double gamma);
// base_lr * gamma^(number of milestones <= t), as torch's MultiStepLR;
// milestones non-decreasing (a repeated one decays twice, as in torch).
std::unique_ptr<LrSchedule> multi_step_lr(double base_lr, std::vector<int64_t> milestones, double gamma);
// base_lr until `start`, then half a cosine down to min_lr at `end`, min_lr
// after: min_lr + (base_lr - min_lr) * (1 + cos(pi * (t - start) / (end - start))) / 2.
std::unique_ptr<LrSchedule> cosine_lr(double base_lr, int64_t start, int64_t end, double min_lr = 0);
// Linear warm-up over [0, length): start_lr + (target - start_lr) * t / length
// with target = main->get_lr(length), rising within a unit for a fractional
// t (Goyal et al.'s gradual warm-up, per step); main->get_lr(t) from t =
// length on.
// `main` sees the absolute t (milestones and cosine bounds count from 0, so
// cosine-with-warm-up is linear_warmup(0, W, cosine_lr(lr, W, T))).
std::unique_ptr<LrSchedule> linear_warmup(double start_lr, int64_t length, std::unique_ptr<LrSchedule> main);

enum class LrScaling { kNone, kLinear, kSqrt };
// The lr for `workers` (>= 1) workers from the single-worker lr: base_lr,
// base_lr * workers or base_lr * sqrt(workers).
double scale_lr(double base_lr, int64_t workers, LrScaling rule);
// MLBench's warm-up length for a scaling rule: floor(log2(workers)) epochs
// for linear scaling (its int(math.log(world_size, 2)), exact here for
// powers of two; tasks 1 and 2), 3 * workers epochs for square-root scaling
// (task 3a), none for one worker or no scaling.
int64_t mlbench_warmup_epochs(int64_t workers, LrScaling rule = LrScaling::kLinear);

struct PlateauOptions {
  enum class Mode { kMin, kMax };  // whether the metric should fall (loss) or rise (accuracy)
  enum class ThresholdMode { kRel, kAbs };
  // torch.optim.lr_scheduler.ReduceLROnPlateau's defaults.
  Mode mode = Mode::kMin;
  double factor = 0.1;    // new lr = max(lr * factor, min_lr); in (0, 1)
  int64_t patience = 10;  // epochs without improvement tolerated; the next one reduces
  double threshold = 1e-4;
  ThresholdMode threshold_mode = ThresholdMode::kRel;
  int64_t cooldown = 0;  // epochs after a reduction in which bad epochs are not counted
  double min_lr = 0;
  double eps = 1e-8;  // reductions smaller than this are skipped
};

// A linear warm-up before the plateau logic starts, over whole epochs.
struct PlateauWarmup {
  int64_t epochs = 0;
  double start_lr = 0;
};

// torch's ReduceLROnPlateau, with MLBench's ReduceLROnPlateauWithWarmup
// (mlbench_core/lr_scheduler/pytorch/lr.py) in front when warmup.epochs > 0:
// the lr starts at warmup.start_lr; the first warmup.epochs calls of step()
// ignore their metric and move it linearly to `lr` (after call e it is
// start_lr + (lr - start_lr) * e / epochs); the calls after that run the
// plateau rule. MLBench's ResNet-20 recipe for k workers is
//   ReduceLrOnPlateau(0.02 * k, {factor 0.5, patience 1, threshold 0.01 abs, min_lr 0.02},
//          {mlbench_warmup_epochs(k), 0.02})
// with step(validation loss) after each epoch. (Its docs say "a plateau for
// 2 consecutive epochs": torch reduces once num_bad_epochs > patience, so
// patience 1 is that rule.)
class ReduceLrOnPlateau {
 public:
  // Throws on invalid options, naming the field.
  ReduceLrOnPlateau(double lr, PlateauOptions options, PlateauWarmup warmup = {});

  // The lr for the coming epoch.
  double lr() const { return lr_; }
  // Call once per epoch with its metric; returns the lr for the next one.
  // A NaN metric counts as no improvement.
  double step(double metric);

  // Entries "lr", "best" (f64 []), "epochs", "num_bad_epochs",
  // "cooldown_counter" (i64 []); load_state checks all before taking any.
  NamedTensors state() const;
  absl::Status load_state(const NamedTensors& state);

 private:
  bool is_better(double metric) const;

  PlateauOptions options_;
  PlateauWarmup warmup_;
  double target_lr_;  // where the warm-up ends
  double lr_;
  double best_;
  int64_t epochs_ = 0;  // step() calls so far
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
};

}  // namespace ts::optim
