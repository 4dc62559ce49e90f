#include "tasks/common/batch_sources.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/loader/device_prefetcher.h"
#include "data/loader/loader.h"
#include "data/loader/sampler.h"

namespace ts::tasks {
namespace {

// Training shuffles and pads every rank's shard to one length, as PyTorch's
// DistributedSampler; evaluation reads the set in order, each sample once,
// so that no sample counts twice in the metrics, on shards that may differ
// by one (the ranks only meet to sum the results).
absl::StatusOr<std::unique_ptr<data::Sampler>> make_sampler(int64_t n, int world_size, int rank, bool training,
                                                            uint64_t seed) {
  if (world_size > 1) {
    if (!training && n < world_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("the evaluation set's ", n, " samples cannot give each of ", world_size, " ranks one"));
    }
    data::DistributedOptions distributed;
    distributed.shuffle = training;
    distributed.seed = seed;
    if (!training) distributed.remainder = data::DistributedOptions::Remainder::kUneven;
    return data::DistributedSampler::create(n, world_size, rank, distributed);
  }
  if (training) return std::unique_ptr<data::Sampler>(new data::ShuffledSampler(n, seed));
  return std::unique_ptr<data::Sampler>(new data::SequentialSampler(n));
}

absl::StatusOr<std::shared_ptr<data::BatchSource>> make_loader(std::shared_ptr<const data::Dataset> dataset,
                                                               const data::Transform& transform,
                                                               const TaskConfig& config, int world_size, int rank,
                                                               Device device, bool training) {
  data::LoaderOptions loader;
  loader.batch_size = config.batch_size();
  loader.num_workers = config.num_workers();
  loader.seed = config.seed();
  loader.transform = transform;
  // Pinned for the GPU the batches go to; on the CPU pinning buys nothing.
  loader.pin_memory = device.is_cuda();
  loader.pin_device = device.is_cuda() ? device.index : 0;
  ASSIGN_OR_RETURN(std::unique_ptr<data::Sampler> sampler,
                   make_sampler(dataset->size(), world_size, rank, training, config.seed()));
  ASSIGN_OR_RETURN(std::unique_ptr<data::DataLoader> made,
                   data::DataLoader::create(std::move(dataset), std::move(sampler), std::move(loader)));
  return std::shared_ptr<data::BatchSource>(std::move(made));
}

}  // namespace

absl::StatusOr<BatchSources> make_batch_sources(const TrainingData& data, const TaskConfig& config, int world_size,
                                                int rank, Device device) {
  const bool no_datasets = data.train == nullptr && data.eval == nullptr;
  const bool no_sources = data.train_batches == nullptr && data.eval_batches == nullptr;
  const bool datasets = data.train != nullptr && data.eval != nullptr && no_sources;
  const bool sources = data.train_batches != nullptr && data.eval_batches != nullptr && no_datasets;
  if (!datasets && !sources) {
    return absl::InvalidArgumentError(
        "the recipe must give either both datasets (train, eval) or both batch sources (train_batches, "
        "eval_batches)");
  }
  BatchSources made;
  if (sources) {
    made = {data.train_batches, data.eval_batches};
  } else {
    ASSIGN_OR_RETURN(made.train, make_loader(data.train, data.train_transform, config, world_size, rank, device,
                                             /*training=*/true));
    ASSIGN_OR_RETURN(made.eval, make_loader(data.eval, data.eval_transform, config, world_size, rank, device,
                                            /*training=*/false));
  }
  // Batches reach the GPU one ahead, from the loader's pinned buffers on a
  // copy stream of their own, rather than staged through pageable memory at
  // the start of each step.
  if (device.is_cuda()) {
    ASSIGN_OR_RETURN(made.train, data::DevicePrefetcher::create(std::move(made.train), device));
    ASSIGN_OR_RETURN(made.eval, data::DevicePrefetcher::create(std::move(made.eval), device));
  }
  return made;
}

}  // namespace ts::tasks
