#include "optim/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tensor/ops.h"

namespace ts::optim {

LossScalerOptions LossScalerOptions::mlbench_gnmt() {
  return {.initial = 1024, .factor = 2, .window = 128, .max = 8192};
}

LossScalerOptions LossScalerOptions::mlbench_transformer() {
  // fairseq's DynamicLossScaler, which MLBench's Transformer uses, has no cap.
  return {.initial = 128, .factor = 2, .window = 2000, .max = std::numeric_limits<double>::infinity()};
}

LossScalerOptions LossScalerOptions::pytorch_grad_scaler() {
  // GradScaler has no cap.
  return {.initial = 65536, .factor = 2, .window = 2000, .max = std::numeric_limits<double>::infinity()};
}

absl::Status validate(const LossScalerOptions& o) {
  const auto bad = [](const char* field, double value, const char* rule) {
    return absl::InvalidArgumentError(absl::StrCat("loss scaler: ", field, " is ", value, "; it must be ", rule));
  };
  if (!(std::isfinite(o.min) && o.min > 0)) return bad("min", o.min, "positive and finite");
  if (!(std::isfinite(o.initial) && o.initial > o.min)) return bad("initial", o.initial, "finite and > min");
  if (!(o.max >= o.initial)) return bad("max", o.max, ">= initial (infinity: no cap)");
  if (!(std::isfinite(o.factor) && o.factor > 1)) return bad("factor", o.factor, "finite and > 1");
  if (o.window < 1) return bad("window", static_cast<double>(o.window), ">= 1");
  return absl::OkStatus();
}

DynamicLossScaler::DynamicLossScaler(LossScalerOptions options) : options_(options), scale_(options.initial) {
  throw_if_error(validate(options_));
}

absl::StatusOr<bool> DynamicLossScaler::update(bool found_non_finite) {
  if (found_non_finite) {
    const double next = scale_ / options_.factor;
    if (next <= options_.min) {
      return absl::FailedPreconditionError(
          absl::StrCat("the loss scale reached its minimum ", options_.min, " (it is ", scale_, " after ", skipped_,
                       " skipped steps, and would be ", next,
                       "): the gradients overflow at every scale, so training has "
                       "diverged; lower the learning rate, or check the data and the model"));
    }
    scale_ = next;
    clean_ = 0;
    ++skipped_;
    return false;
  }
  if (++clean_ >= options_.window) {
    scale_ = std::min(scale_ * options_.factor, options_.max);
    clean_ = 0;
  }
  return true;
}

NamedTensors DynamicLossScaler::state() const {
  return {{"loss_scaler.scale", scalar_tensor(scale_, {DType::kF64})},
          {"loss_scaler.clean_steps", scalar_tensor(clean_, {DType::kI64})},
          {"loss_scaler.skipped_steps", scalar_tensor(skipped_, {DType::kI64})}};
}

absl::Status DynamicLossScaler::load_state(const NamedTensors& state) {
  ASSIGN_OR_RETURN(StateReader reader, StateReader::create(state, "DynamicLossScaler.load_state"));
  ASSIGN_OR_RETURN(const double scale, reader.take_f64("loss_scaler.scale"));
  ASSIGN_OR_RETURN(const int64_t clean, reader.take_i64("loss_scaler.clean_steps"));
  ASSIGN_OR_RETURN(const int64_t skipped, reader.take_i64("loss_scaler.skipped_steps"));
  RETURN_IF_ERROR(reader.finish());
  if (!(scale > options_.min && scale <= options_.max) || clean < 0 || clean >= options_.window || skipped < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DynamicLossScaler.load_state: scale ", scale, ", clean steps ", clean, ", skipped steps ", skipped,
        " do not fit the options (min ", options_.min, ", max ", options_.max, ", window ", options_.window, ")"));
  }
  scale_ = scale;
  clean_ = clean;
  skipped_ = skipped;
  return absl::OkStatus();
}

}  // namespace ts::optim
