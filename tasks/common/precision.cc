#include "tasks/common/precision.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "nn/mixed_precision.h"
#include "tensor/ops.h"
#include "tensor/precision.h"

namespace ts::tasks {

absl::StatusOr<Precision> Precision::parse(absl::string_view dtype, bool tf32, bool channels_last) {
  const std::string name = absl::AsciiStrToLower(dtype);
  Precision p{DType::kF32, tf32, channels_last};
  if (name == "f16") {
    p.dtype = DType::kF16;
  } else if (name == "bf16") {
    p.dtype = DType::kBF16;
  } else if (name != "f32") {
    return absl::InvalidArgumentError(absl::StrCat("--dtype=", dtype, ": must be f32, f16 or bf16"));
  }
  return p;
}

Tensor Precision::input(const Tensor& t) const {
  if (!is_floating(t.dtype())) return t;
  const DType model_dtype = mixed() ? dtype : t.dtype();
  const bool relayout = channels_last && (t.dim() == 4 || t.dim() == 5);
  if (relayout && !t.is_contiguous(MemoryFormat::kChannelsLast)) {
    // The cast and the change of layout in one pass over the batch.
    Tensor out = empty(t.shape(), {model_dtype, t.device(), MemoryFormat::kChannelsLast});
    copy_(out, t);
    return out;
  }
  const Tensor cast = to(t, model_dtype);
  // Dense in both layouts (size-1 channels or spatial extents): restrided
  // so that it says channels-last, without a copy.
  return relayout ? contiguous(cast, MemoryFormat::kChannelsLast) : cast;
}

std::string Precision::label() const {
  return absl::StrCat(dtype_name(dtype), tf32 ? "+tf32" : "", channels_last ? "/channels_last" : "");
}

Json Precision::to_json() const {
  Json j = Json::object();
  j["dtype"] = std::string(dtype_name(dtype));
  j["tf32"] = tf32;
  j["channels_last"] = channels_last;
  return j;
}

void Precision::cast(nn::Module& model) const {
  if (mixed()) nn::cast_for_mixed_precision(model, dtype);
}

PrecisionStep::PrecisionStep(std::shared_ptr<nn::Module> model, const Precision& precision,
                             const optim::LossScalerOptions& scaler, optim::MixedPrecision::OverflowVote vote)
    : model_(std::move(model)), precision_(precision), vote_(std::move(vote)) {
  set_allow_tf32(precision_.tf32);
  if (precision_.mixed()) {
    precision_.cast(*model_);
    mixed_ = std::make_unique<optim::MixedPrecision>(model_->named_parameters(), scaler);
    optimized_ = mixed_->masters();
  } else {
    optimized_ = model_->named_parameters();
  }
}

void PrecisionStep::backward(const autograd::Variable& loss) {
  (mixed_ != nullptr ? mixed_->scale_loss(loss) : loss).backward();
}

absl::StatusOr<bool> PrecisionStep::unscale(int64_t step) {
  if (mixed_ == nullptr) return true;
  absl::StatusOr<bool> take = mixed_->unscale_gradients(step, vote_);
  // The masters hold the gradients now; the model's would add to the next.
  if (!take.ok() || !*take) model_->zero_grad();
  return take;
}

void PrecisionStep::after_step() {
  if (mixed_ == nullptr) return;
  mixed_->copy_masters_to_model();
  model_->zero_grad();
}

int64_t PrecisionStep::skipped_steps() const { return mixed_ == nullptr ? 0 : mixed_->scaler().skipped_steps(); }

}  // namespace ts::tasks
