// Samplers choose which dataset indices an epoch visits and in what order:
// sequential, shuffled per epoch from a seed, and distributed (each rank a
// disjoint shard of equal length, as PyTorch's DistributedSampler). A
// BatchSampler groups a sampler's indices into batches.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"

namespace ts::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Selects the epoch whose order indices() gives (shuffling samplers draw a
  // new permutation per epoch; the same seed and epoch give the same order).
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  // The indices of the current epoch, in visiting order.
  virtual std::vector<int64_t> indices() const = 0;
  // How many indices each epoch yields.
  virtual int64_t size() const = 0;

 private:
  int64_t epoch_ = 0;
};

// A permutation of [0, n) that depends only on (seed, epoch): Fisher-Yates
// over a counter-based stream, identical on every rank and machine.
std::vector<int64_t> shuffled_range(int64_t n, uint64_t seed, int64_t epoch);

// 0, 1, ..., n-1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n) : n_(n) {}
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
};

// A fresh permutation of [0, n) each epoch.
class ShuffledSampler : public Sampler {
 public:
  ShuffledSampler(int64_t n, uint64_t seed) : n_(n), seed_(seed) {}
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
  uint64_t seed_;
};

struct DistributedOptions {
  bool shuffle = true;
  uint64_t seed = 0;
  // What becomes of the indices that do not divide evenly among the ranks:
  //   kPad     the (shuffled) list is padded by wrapping around (some
  //            samples are seen twice an epoch), PyTorch's default;
  //   kDrop    the tail is dropped;
  //   kUneven  each is seen once, by the first n % num_replicas ranks, whose
  //            shards are one longer: for evaluation, where ranks need not
  //            take the same number of steps and no sample may count twice.
  enum class Remainder { kPad, kDrop, kUneven };
  Remainder remainder = Remainder::kPad;
};

// Rank `rank` of `num_replicas` takes every num_replicas-th index of one
// list all ranks agree on, starting at its rank: shards are disjoint (up to
// the wrapped padding) and, padded or dropped, of equal length, so every rank
// runs the same number of steps.
class DistributedSampler : public Sampler {
 public:
  // Errors name the bad rank or replica count; an empty dataset cannot be
  // padded.
  static absl::StatusOr<std::unique_ptr<DistributedSampler>> create(int64_t dataset_size, int num_replicas, int rank,
                                                                    DistributedOptions options = {});
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return per_rank_; }

 private:
  DistributedSampler(int64_t n, int num_replicas, int rank, DistributedOptions options, int64_t per_rank)
      : n_(n), num_replicas_(num_replicas), rank_(rank), options_(options), per_rank_(per_rank) {}

  int64_t n_;
  int num_replicas_;
  int rank_;
  DistributedOptions options_;
  int64_t per_rank_;
};

// Groups a sampler's indices into batches of batch_size; the last batch is
// shorter unless drop_last drops it.
class BatchSampler {
 public:
  static absl::StatusOr<BatchSampler> create(std::unique_ptr<Sampler> sampler, int64_t batch_size, bool drop_last);
  void set_epoch(int64_t epoch) { sampler_->set_epoch(epoch); }
  std::vector<std::vector<int64_t>> batches() const;
  int64_t num_batches() const;
  int64_t batch_size() const { return batch_size_; }

 private:
  BatchSampler(std::unique_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
      : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {}

  std::unique_ptr<Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

}  // namespace ts::data
