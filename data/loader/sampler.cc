#include "data/loader/sampler.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "data/loader/random_stream.h"

namespace ts::data {
namespace {

std::vector<int64_t> iota_range(int64_t n) {
  std::vector<int64_t> out(n);
  std::iota(out.begin(), out.end(), int64_t{0});
  return out;
}

}  // namespace

std::vector<int64_t> shuffled_range(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> out = iota_range(n);
  RandomStream rng(RandomStream::key_for(seed, SeedUse::kShuffle, static_cast<uint64_t>(epoch)), 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(out[i], out[rng.uniform_int(i + 1)]);
  return out;
}

std::vector<int64_t> SequentialSampler::indices() const { return iota_range(n_); }

std::vector<int64_t> ShuffledSampler::indices() const { return shuffled_range(n_, seed_, epoch()); }

absl::StatusOr<std::unique_ptr<DistributedSampler>> DistributedSampler::create(int64_t dataset_size, int num_replicas,
                                                                               int rank, DistributedOptions options) {
  if (num_replicas < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("DistributedSampler: num_replicas must be at least 1, got ", num_replicas));
  }
  if (rank < 0 || rank >= num_replicas) {
    return absl::InvalidArgumentError(
        absl::StrCat("DistributedSampler: rank ", rank, " is outside [0, ", num_replicas, ")"));
  }
  if (dataset_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("DistributedSampler: negative dataset size ", dataset_size));
  }
  using Remainder = DistributedOptions::Remainder;
  if (dataset_size == 0 && options.remainder == Remainder::kPad) {
    return absl::InvalidArgumentError(
        "DistributedSampler: the dataset is empty, so there is nothing to pad the shards with");
  }
  int64_t per_rank = dataset_size / num_replicas;
  if (options.remainder == Remainder::kPad && dataset_size % num_replicas != 0) ++per_rank;
  if (options.remainder == Remainder::kUneven && rank < dataset_size % num_replicas) ++per_rank;
  return std::unique_ptr<DistributedSampler>(
      new DistributedSampler(dataset_size, num_replicas, rank, options, per_rank));
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> all = options_.shuffle ? shuffled_range(n_, options_.seed, epoch()) : iota_range(n_);
  // Padding wraps around the list as many times as needed (more replicas than
  // samples wrap more than once); dropping truncates.
  std::vector<int64_t> out;
  out.reserve(per_rank_);
  for (int64_t k = 0, i = rank_; k < per_rank_; ++k, i += num_replicas_) out.push_back(all[i % n_]);
  return out;
}

absl::StatusOr<BatchSampler> BatchSampler::create(std::unique_ptr<Sampler> sampler, int64_t batch_size,
                                                  bool drop_last) {
  if (sampler == nullptr) return absl::InvalidArgumentError("BatchSampler: no sampler given");
  if (batch_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("BatchSampler: batch_size must be at least 1, got ", batch_size));
  }
  return BatchSampler(std::move(sampler), batch_size, drop_last);
}

int64_t BatchSampler::num_batches() const {
  const int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::vector<std::vector<int64_t>> BatchSampler::batches() const {
  const std::vector<int64_t> indices = sampler_->indices();
  const int64_t count = num_batches();
  std::vector<std::vector<int64_t>> out(count);
  for (int64_t b = 0; b < count; ++b) {
    const int64_t begin = b * batch_size_;
    const int64_t end = std::min<int64_t>(begin + batch_size_, indices.size());
    out[b].assign(indices.begin() + begin, indices.begin() + end);
  }
  return out;
}

}  // namespace ts::data
