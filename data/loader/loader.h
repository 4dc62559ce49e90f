// The data loader: worker threads fetch examples (Dataset::get_augmented), transform
// them and collate each batch into host memory (pinned when a GPU is
// present), at most prefetch_depth batches ahead of the consumer, and hand
// the batches out in sampler order. Errors from a worker - a failed Status,
// or an exception such as the ts::Error a tensor op in a transform throws -
// reach the caller through next() for the batch they broke; no exception
// leaves a worker thread.
// One thread consumes a loader (start_epoch, next, the destructor); the
// workers are internal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "data/dataset.h"
#include "data/loader/batch_source.h"
#include "data/loader/collate.h"
#include "data/loader/host_buffer_pool.h"
#include "data/loader/sampler.h"
#include "data/loader/transform.h"

namespace ts::data {

struct LoaderOptions {
  int64_t batch_size = 1;
  bool drop_last = false;
  // 0: each batch is made on the caller's thread inside next(). Each worker
  // runs its ops on itself alone (no thread team of its own).
  int num_workers = 2;
  // Batches finished or in the making ahead of the one next() returns next;
  // bounds the loader's memory to about prefetch_depth batches.
  int prefetch_depth = 4;
  // With the epoch and the dataset index, selects each sample's RandomStream.
  uint64_t seed = 0;
  Transform transform;  // empty: examples are collated as the dataset gives them
  CollateOptions collate;
  // Collate into pinned memory when a CUDA device is present, pinned through
  // the context of CUDA device `pin_device` (the one the batches go to).
  bool pin_memory = true;
  int pin_device = 0;
};

class DataLoader final : public BatchSource {
 public:
  // Starts the workers; they wait for start_epoch.
  static absl::StatusOr<std::unique_ptr<DataLoader>> create(std::shared_ptr<const Dataset> dataset,
                                                            std::unique_ptr<Sampler> sampler, LoaderOptions options);
  // Stops and joins the workers, at any point of an epoch.
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // BatchSource: the sampler's order and the transforms' random streams
  // depend on the epoch. A batch whose making failed comes back from next()
  // as its error (naming the batch and the sample), and the following call
  // moves on to the next batch.
  absl::Status start_epoch(int64_t epoch, int64_t first_batch = 0) override;
  absl::StatusOr<std::optional<Batch>> next() override;
  int64_t num_batches() const override { return batch_sampler_.num_batches(); }
  int64_t epoch() const;
  bool pinned() const { return pool_->pinned(); }
  HostBufferPoolStats memory_stats() const { return pool_->stats(); }

 private:
  DataLoader(std::shared_ptr<const Dataset> dataset, BatchSampler batch_sampler, LoaderOptions options);
  void worker_loop();
  bool can_claim() const;  // mu_ held
  absl::StatusOr<Batch> make_batch(int64_t position, const std::vector<int64_t>& indices, int64_t epoch,
                                   uint64_t generation) const;

  const std::shared_ptr<const Dataset> dataset_;
  const LoaderOptions options_;
  const std::shared_ptr<HostBufferPool> pool_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // workers: a batch may be claimed, or stop
  std::condition_variable ready_cv_;  // consumer: a batch is ready
  std::condition_variable idle_cv_;   // start_epoch: no batch is in the making
  BatchSampler batch_sampler_;
  std::vector<std::vector<int64_t>> batches_;
  int64_t epoch_ = 0;
  bool started_ = false;
  bool stop_ = false;
  int64_t next_claim_ = 0;
  int64_t delivered_ = 0;
  int in_flight_ = 0;
  std::map<int64_t, absl::StatusOr<Batch>> ready_;
  // Bumped by start_epoch and the destructor; a worker whose batch belongs to
  // an older generation stops early and drops it.
  std::atomic<uint64_t> generation_{0};
  std::vector<std::thread> workers_;
};

}  // namespace ts::data
