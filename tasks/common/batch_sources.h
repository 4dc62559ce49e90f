// Where the trainer's batches come from: the recipe's own batch sources, or
// loaders over its datasets (training shuffled and sharded across ranks as
// PyTorch's DistributedSampler does it, evaluation in order, each sample
// once); on a GPU behind a DevicePrefetcher.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "data/loader/batch_source.h"
#include "tasks/common/config.pb.h"
#include "tasks/common/recipe.h"
#include "tensor/device.h"

namespace ts::tasks {

struct BatchSources {
  std::shared_ptr<data::BatchSource> train;
  std::shared_ptr<data::BatchSource> eval;
};

// `data` must hold both datasets or both batch sources (kInvalidArgument
// otherwise). The loaders take the config's batch_size, num_workers and
// seed; this process is rank `rank` of `world_size`.
absl::StatusOr<BatchSources> make_batch_sources(const TrainingData& data, const TaskConfig& config, int world_size,
                                                int rank, Device device);

}  // namespace ts::tasks
