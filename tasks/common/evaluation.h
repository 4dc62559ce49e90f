// Evaluation of a model over a loader's epoch: the mean loss and the share
// of correct predictions, summed over the ranks' shards when distributed.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "data/loader/loader.h"
#include "nn/module.h"

namespace ts::tasks {

// What one batch contributes: the summed loss, the correct predictions and
// the number of samples.
struct BatchScore {
  double loss_sum = 0;
  int64_t correct = 0;
  int64_t samples = 0;
};
using ScoreFn = std::function<absl::StatusOr<BatchScore>(const Tensor& outputs, const Tensor& targets)>;

struct EvalResult {
  double loss = 0;
  double accuracy = 0;
  int64_t samples = 0;
};

// Loader batches are {inputs, targets}. The model runs in eval mode without
// recording a graph and is put back in training mode afterwards. With a
// communicator, every rank must call it; the result covers all shards.
absl::StatusOr<EvalResult> evaluate(nn::Module& model, data::DataLoader& loader, int64_t epoch,
                                    Device device, const ScoreFn& score,
                                    collectives::Communicator* comm);

// Cross-entropy and top-1 accuracy of logits [N, C] against labels [N].
absl::StatusOr<BatchScore> score_multiclass(const Tensor& logits, const Tensor& labels);

// A batch's fields on `device`.
absl::StatusOr<std::vector<Tensor>> fields_on(const data::Batch& batch, Device device);

}  // namespace ts::tasks
