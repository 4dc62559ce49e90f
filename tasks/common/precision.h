// The precision and memory layout a model trains in, as --dtype, --tf32 and
// --channels_last give them (TaskConfig's dtype, tf32 and channels_last):
//   f32          the model in f32; with tf32, cuBLAS and cuDNN may use TF32
//                tensor cores for f32 products and convolutions
//   f16, bf16    apex O2 mixed precision: the model in that dtype but for
//                batch norm, f32 master weights for the optimizer, dynamic
//                loss scaling (nn/mixed_precision.h, optim/mixed_precision.h)
//   channels_last  4-D and 5-D inputs laid out [N, H, W, C] in memory; the
//                layers keep that layout through the model
// PrecisionStep is the training step in a Precision, for the Trainer and
// for the loops that time their own steps (ddp_bench, neighbor_bench,
// resnet50_step_benchmark).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "autograd/variable.h"
#include "base/json.h"
#include "nn/module.h"
#include "optim/mixed_precision.h"
#include "tensor/tensor.h"

namespace ts::tasks {

struct Precision {
  DType dtype = DType::kF32;  // the model's: f32, f16 or bf16
  bool tf32 = false;
  bool channels_last = false;

  // `dtype`: f32, f16 or bf16, in any case; an error names --dtype.
  static absl::StatusOr<Precision> parse(absl::string_view dtype, bool tf32, bool channels_last);

  bool mixed() const { return is_reduced_float(dtype); }

  // The model in its dtype but for batch norm (f32), under mixed precision;
  // nothing in f32. Casting twice changes nothing.
  void cast(nn::Module& model) const;

  // A batch's tensor as the model takes it: floating ones in the model's
  // dtype, and channels-last when that is asked and the tensor is 4-D or
  // 5-D; other tensors (labels, lengths) as they are.
  Tensor input(const Tensor& t) const;

  // "f32", "f32+tf32", "f16/channels_last": for table headers.
  std::string label() const;
  // {"dtype": "f16", "tf32": false, "channels_last": true}
  Json to_json() const;
};

// One model's training step in a Precision:
//
//   model->to(device);
//   p.cast(*model);                      // before DDP takes rank 0's weights
//   (DDP over the model)
//   PrecisionStep precision(model, p);   // masters from the model's weights
//   optim::Sgd sgd(precision.optimized(), options);
//   each step:
//     loss = cross_entropy(model->forward(precision.input(images)), labels)
//     precision.backward(loss);          // once per micro-batch
//     if (precision.unscale(step)) {     // (clip precision.optimized()'s gradients)
//       sgd.step(); precision.after_step();
//     }
//     sgd.zero_grad();
//
// Under mixed precision the backward is of the scaled loss, and unscale
// moves the gradients, divided by the scale, into the masters'; a step whose
// gradients overflowed is skipped (unscale says false, the scale drops).
// Also sets TF32 for the process, as set_allow_tf32 does.
class PrecisionStep {
 public:
  using NamedParameters = std::vector<std::pair<std::string, autograd::Variable>>;

  // `model` on its device. Casts it if that was not done (Precision::cast),
  // then takes its weights as the masters'. `scaler` is the dynamic loss
  // scaler's under mixed precision (valid: optim::validate). `vote` makes
  // the ranks agree on skipping a step where their gradients differ (see
  // MixedPrecision::OverflowVote).
  PrecisionStep(std::shared_ptr<nn::Module> model, const Precision& precision,
                const optim::LossScalerOptions& scaler = optim::LossScalerOptions::pytorch_grad_scaler(),
                optim::MixedPrecision::OverflowVote vote = nullptr);

  const Precision& precision() const { return precision_; }

  // What the optimizer steps (and gradient clipping clips): the model's
  // parameters, or their f32 masters.
  const NamedParameters& optimized() const { return optimized_; }

  Tensor input(const Tensor& t) const { return precision_.input(t); }

  // loss.backward(), of the scaled loss under mixed precision. The model's
  // gradients add up over calls, one per micro-batch.
  void backward(const autograd::Variable& loss);

  // After the backwards of a step (and DDP's averaging): whether to take the
  // optimizer step. Under mixed precision the model's gradients are first
  // unscaled into the masters' and the loss scaler updated; on false the
  // step overflowed and nothing is to be stepped. An error when the loss
  // scale cannot drop further (it names `step` and the parameter).
  absl::StatusOr<bool> unscale(int64_t step);

  // After the optimizer's step: the masters rounded into the model.
  void after_step();

  // Steps the loss scaler skipped (0 in f32).
  int64_t skipped_steps() const;

  // The masters and the loss scaler (for checkpoints and reports); null in
  // f32.
  const optim::MixedPrecision* mixed() const { return mixed_.get(); }
  optim::MixedPrecision* mixed() { return mixed_.get(); }

 private:
  std::shared_ptr<nn::Module> model_;
  Precision precision_;
  std::unique_ptr<optim::MixedPrecision> mixed_;
  optim::MixedPrecision::OverflowVote vote_;
  NamedParameters optimized_;
};

}  // namespace ts::tasks
