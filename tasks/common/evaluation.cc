#include "tasks/common/evaluation.h"

#include "autograd/grad_mode.h"
#include "nn/losses.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"

namespace ts::tasks {

absl::StatusOr<std::vector<Tensor>> fields_on(const data::Batch& batch, Device device) {
  std::vector<Tensor> fields;
  for (const Tensor& t : batch.fields) {
    if (t.device() == device) {
      fields.push_back(t);
    } else {
      ASSIGN_OR_RETURN(Tensor moved, to(t, device));
      fields.push_back(std::move(moved));
    }
  }
  return fields;
}

absl::StatusOr<BatchScore> score_multiclass(const Tensor& logits, const Tensor& labels) {
  nn::CrossEntropyOptions options;
  options.reduction = nn::Reduction::kSum;
  ASSIGN_OR_RETURN(autograd::Variable loss,
                   nn::cross_entropy(autograd::Variable(logits), labels, options));
  ASSIGN_OR_RETURN(Tensor loss_f64, to(loss.data(), DType::kF64));
  ASSIGN_OR_RETURN(Tensor loss_cpu, to(loss_f64, Device::cpu()));
  BatchScore score;
  ASSIGN_OR_RETURN(score.loss_sum, item<double>(loss_cpu));
  ASSIGN_OR_RETURN(score.correct, nn::topk_correct(logits, labels, 1));
  score.samples = logits.size(0);
  return score;
}

absl::StatusOr<EvalResult> evaluate(nn::Module& model, data::DataLoader& loader, int64_t epoch,
                                    Device device, const ScoreFn& score,
                                    collectives::Communicator* comm) {
  autograd::NoGradGuard no_grad;
  model.eval();
  BatchScore total;
  absl::Status status = loader.start_epoch(epoch);
  while (status.ok()) {
    absl::StatusOr<std::optional<data::Batch>> batch = loader.next();
    if (!batch.ok()) {
      status = batch.status();
      break;
    }
    if (!batch->has_value()) break;
    absl::StatusOr<std::vector<Tensor>> fields = fields_on(**batch, device);
    if (!fields.ok()) {
      status = fields.status();
      break;
    }
    absl::StatusOr<autograd::Variable> outputs = model.forward(autograd::Variable((*fields)[0]));
    if (!outputs.ok()) {
      status = outputs.status();
      break;
    }
    absl::StatusOr<BatchScore> s = score(outputs->data(), (*fields)[1]);
    if (!s.ok()) {
      status = s.status();
      break;
    }
    total.loss_sum += s->loss_sum;
    total.correct += s->correct;
    total.samples += s->samples;
  }
  model.train();
  RETURN_IF_ERROR(status);
  if (comm != nullptr) {
    ASSIGN_OR_RETURN(Tensor sums,
                     from_vector<double>({total.loss_sum, static_cast<double>(total.correct),
                                          static_cast<double>(total.samples)},
                                         {3}));
    // On the communicator's device (NCCL takes CUDA tensors only).
    ASSIGN_OR_RETURN(Tensor on_device, to(sums, device));
    RETURN_IF_ERROR(comm->allreduce(on_device, collectives::ReduceOp::kSum).wait());
    ASSIGN_OR_RETURN(sums, to(on_device, Device::cpu()));
    const double* s = sums.data<double>();
    total = {s[0], static_cast<int64_t>(s[1]), static_cast<int64_t>(s[2])};
  }
  EvalResult result;
  result.samples = total.samples;
  if (total.samples > 0) {
    result.loss = total.loss_sum / total.samples;
    result.accuracy = static_cast<double>(total.correct) / total.samples;
  }
  return result;
}

}  // namespace ts::tasks
