#include "data/loader/bptt_batches.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "data/readers/lm_text.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace ts::data {

absl::StatusOr<std::unique_ptr<BpttBatches>> BpttBatches::create(Tensor batched, BpttOptions options) {
  if (!batched.defined() || batched.dim() != 2 || batched.dtype() != DType::kI64 || batched.size(1) < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("BpttBatches: expected i64 [batch, n] rows with n >= 2 from batchify, got ",
                     batched.defined() ? batched.describe() : std::string("an undefined tensor")));
  }
  if (options.bptt < 1 || options.min_length < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("BpttBatches: bptt ", options.bptt, " and min_length ", options.min_length, " must be >= 1"));
  }
  std::unique_ptr<BpttBatches> batches(new BpttBatches(std::move(batched), options));
  batches->plan_epoch(0);
  return batches;
}

void BpttBatches::plan_epoch(int64_t epoch) {
  starts_.clear();
  lengths_.clear();
  // An epoch's own Philox stream: counters from epoch * 2^32 on.
  Generator generator(options_.seed);
  generator.set_state({options_.seed, static_cast<uint64_t>(epoch) << 32});
  const int64_t n = batched_.size(1);
  const int64_t last_start = options_.skip_single_token_tail ? n - 3 : n - 2;
  for (int64_t start = 0; start <= last_start;) {
    const int64_t drawn =
        options_.random_lengths ? random_bptt_length(options_.bptt, generator, options_.min_length) : options_.bptt;
    const int64_t length = std::min(drawn, n - 1 - start);
    starts_.push_back(start);
    lengths_.push_back(length);
    start += length;
  }
}

absl::Status BpttBatches::start_epoch(int64_t epoch, int64_t first_batch) {
  if (epoch < 0) return absl::InvalidArgumentError(absl::StrCat("BpttBatches::start_epoch: epoch ", epoch));
  plan_epoch(epoch);
  if (first_batch < 0 || first_batch > num_batches()) {
    return absl::OutOfRangeError(absl::StrCat("BpttBatches::start_epoch: first batch ", first_batch, " of an epoch of ",
                                              num_batches(), " windows"));
  }
  next_ = first_batch;
  started_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Batch>> BpttBatches::next() {
  if (!started_) return absl::FailedPreconditionError("BpttBatches::next: call start_epoch first");
  if (next_ >= num_batches()) return std::optional<Batch>();
  const int64_t k = next_++;
  ASSIGN_OR_RETURN(const BpttWindow window, bptt_window(batched_, starts_[k], lengths_[k]));
  return capture([&] {
    Batch batch;
    batch.index = k;
    batch.fields = {contiguous(window.input.transpose(0, 1)), contiguous(window.target.transpose(0, 1)),
                    scalar_tensor(starts_[k], {DType::kI64})};
    return std::optional<Batch>(std::move(batch));
  });
}

}  // namespace ts::data
