// The language-model task's data: the corpus its config names (the fortunes
// prose, WikiText-2, or a synthetic stream), its vocabulary from the train
// split, and this rank's batch sources. As MLBench's task 3a shares it out:
// the train stream is batchified into batch_size x world_size rows and rank
// r reads rows [r * batch_size, (r + 1) * batch_size), so every rank has
// the same number of columns and, drawing the same random window lengths
// from the run's seed, takes the same number of steps. The validation
// stream is batchified into eval_batch_size rows at any world size (so the
// perplexity is the reference's, which every worker evaluates whole), the
// rows shared out among the ranks, whose sums the trainer adds.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "tasks/common/config.pb.h"
#include "tasks/common/recipe.h"

namespace ts::tasks {

struct LmData {
  TrainingData data;  // train_batches, eval_batches (BpttBatches) and the description
  int64_t vocabulary = 0;
  // What this rank's validation sums count for: below 1 when it shares its
  // row with other ranks (more ranks than rows).
  double eval_weight = 1;
};

absl::StatusOr<LmData> open_lm_data(const TaskConfig& config, int rank, int world_size);

}  // namespace ts::tasks
