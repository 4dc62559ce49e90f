// Dynamic loss scaling for training in f16 (or bf16): the loss is multiplied
// by the scale before the backward so that small gradients survive the
// 16-bit range; the gradients are divided by it again before the step. A
// step whose gradients hold an inf or NaN is skipped and the scale divided by
// `factor`; after `window` clean steps in a row the scale is multiplied by
// it, up to `max`. A backoff to `min` or below is an error, as fairseq's and
// MLBench's FP16Optimizer test it: training that overflows at every scale has
// diverged (fairseq's "minimum loss scale reached"), and the caller names the
// step and the first parameter at fault.
// The scale, the clean-step count and the skipped-step count are state, saved
// for an exact resume.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "optim/named_state.h"

namespace ts::optim {

struct LossScalerOptions {
  double initial = 65536;  // 2^16
  double factor = 2;       // growth on a clean window, and backoff 1/factor on overflow
  int64_t window = 2000;   // clean steps before the scale grows
  double max = 16777216;   // 2^24
  double min = 1e-4;       // fairseq's and MLBench's: the scale stays above it

  // The presets the benchmarks use.
  static LossScalerOptions mlbench_gnmt();         // 2^10, x2, window 128, max 2^13
  static LossScalerOptions mlbench_transformer();  // 2^7, x2, window 2000, no cap
  static LossScalerOptions pytorch_grad_scaler();  // 2^16, x2 / 0.5, interval 2000
};

// Checks the options: positive and finite, factor > 1, window >= 1,
// min < initial <= max. The error names the field.
absl::Status validate(const LossScalerOptions& options);

class DynamicLossScaler {
 public:
  // Options must pass validate() (else ts::Error).
  explicit DynamicLossScaler(LossScalerOptions options);

  double scale() const { return scale_; }
  // 1 / scale, what gradients are multiplied by.
  double inverse_scale() const { return 1 / scale_; }
  const LossScalerOptions& options() const { return options_; }
  int64_t skipped_steps() const { return skipped_; }

  // After a step's gradients were checked: whether to take the step. On
  // overflow the scale is divided by `factor` (an error if that takes it
  // below `min`, which the caller prefixes with the step and the gradient at
  // fault), else the clean step counts towards growth.
  absl::StatusOr<bool> update(bool found_non_finite);

  // "loss_scaler.scale" (f64), ".clean_steps", ".skipped_steps" (i64).
  NamedTensors state() const;
  absl::Status load_state(const NamedTensors& state);

 private:
  LossScalerOptions options_;
  double scale_;
  int64_t clean_ = 0;    // clean steps since the last change of scale
  int64_t skipped_ = 0;  // over the run
};

}  // namespace ts::optim
