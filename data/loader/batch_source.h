// What a training loop draws its batches from, epoch by epoch: the
// DataLoader (examples of a Dataset, sampled, transformed and collated by
// worker threads), or a source that cuts whole batches out of one stream in
// order (BpttBatches: a language model's token stream, whose windows must
// come in order because the model carries its state from one to the next).
// One thread consumes a source.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tensor/tensor.h"

namespace ts::data {

struct Batch {
  int64_t index = 0;                    // position in the epoch
  std::vector<int64_t> sample_indices;  // dataset indices, in batch order (empty for streams)
  std::vector<Tensor> fields;           // one [B, ...] tensor per example field
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;

  // Begins epoch `epoch` (its order and random draws depend only on the
  // source's seed and the epoch), abandoning what is left of the current
  // one. With `first_batch`, the epoch starts at that batch, the ones before
  // it never made (a resumed run continues mid-epoch with the batches it
  // would have had).
  virtual absl::Status start_epoch(int64_t epoch, int64_t first_batch = 0) = 0;
  // The epoch's next batch, in order; nullopt once the epoch is exhausted.
  virtual absl::StatusOr<std::optional<Batch>> next() = 0;
  // The batches of the epoch start_epoch began last (before the first call:
  // of epoch 0). Sources with random window lengths have a different count
  // every epoch.
  virtual int64_t num_batches() const = 0;
};

}  // namespace ts::data
