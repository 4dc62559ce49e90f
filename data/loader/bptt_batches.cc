#include "data/loader/bptt_batches.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "data/loader/random_stream.h"
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
  std::tie(batches->starts_, batches->lengths_) = batches->plan_epoch(0);
  return batches;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> BpttBatches::plan_epoch(int64_t epoch) const {
  std::vector<int64_t> starts, lengths;
  // The epoch's own key: apart from the other uses of the seed, the tensor
  // ops' generator (weight init, dropout) included.
  Generator generator(RandomStream::key_for(options_.seed, SeedUse::kBpttLengths, static_cast<uint64_t>(epoch)));
  const int64_t n = batched_.size(1);
  const int64_t last_start = options_.skip_single_token_tail ? n - 3 : n - 2;
  for (int64_t start = 0; start <= last_start;) {
    const int64_t drawn =
        options_.random_lengths ? random_bptt_length(options_.bptt, generator, options_.min_length) : options_.bptt;
    const int64_t length = std::min(drawn, n - 1 - start);
    starts.push_back(start);
    lengths.push_back(length);
    start += length;
  }
  return {std::move(starts), std::move(lengths)};
}

absl::Status BpttBatches::start_epoch(int64_t epoch, int64_t first_batch) {
  if (epoch < 0) return absl::InvalidArgumentError(absl::StrCat("BpttBatches::start_epoch: epoch ", epoch));
  // Planned aside: a bad first_batch leaves the current epoch going on.
  auto [starts, lengths] = plan_epoch(epoch);
  if (first_batch < 0 || first_batch > static_cast<int64_t>(starts.size())) {
    return absl::OutOfRangeError(absl::StrCat("BpttBatches::start_epoch: first batch ", first_batch, " of an epoch of ",
                                              starts.size(), " windows"));
  }
  starts_ = std::move(starts);
  lengths_ = std::move(lengths);
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
