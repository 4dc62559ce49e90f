// Moves a batch source's batches to a CUDA device one batch ahead: while the
// caller trains on batch k, batch k+1 is already being copied on the
// prefetcher's own stream, straight from the loader's pinned buffers. Each
// returned batch comes with its copy ordered before the caller's compute
// stream (an event the stream waits on), so no host synchronization is
// needed. The Trainer puts one over its sources on a GPU. (A source whose
// batches are in pageable memory, as a BPTT stream's, still works: the
// driver stages those copies before cudaMemcpyAsync returns.)
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "data/loader/batch_source.h"
#include "tensor/cuda/stream.h"

namespace ts::data {

class DevicePrefetcher final : public BatchSource {
 public:
  // `device` must be a usable CUDA device (the error says how many there
  // are).
  static absl::StatusOr<std::unique_ptr<DevicePrefetcher>> create(std::shared_ptr<BatchSource> source, Device device);
  // Waits for copies in flight, so host buffers go back to the pool unread.
  ~DevicePrefetcher() override;
  DevicePrefetcher(const DevicePrefetcher&) = delete;
  DevicePrefetcher& operator=(const DevicePrefetcher&) = delete;

  absl::Status start_epoch(int64_t epoch, int64_t first_batch = 0) override;
  // The next batch with every field on the device; the device's current
  // stream (the caller's compute stream, as cuda::current_stream sees it)
  // waits for its copy. nullopt at the end of the epoch; errors as the
  // source's.
  absl::StatusOr<std::optional<Batch>> next() override;
  int64_t num_batches() const override { return source_->num_batches(); }

 private:
  struct Staged {
    Batch batch;                        // fields on the device
    std::vector<Tensor> host;           // the pinned sources, kept until copied
    std::optional<cuda::Event> copied;  // recorded after the copies
  };
  DevicePrefetcher(std::shared_ptr<BatchSource> source, Device device, cuda::Stream stream)
      : source_(std::move(source)), device_(device), stream_(std::move(stream)) {}
  // Takes the source's next batch and enqueues its copy on stream_.
  absl::StatusOr<std::optional<Staged>> stage();
  // Allocates the device fields (on stream_) and queues the copies and the
  // event; the current device and stream must be set.
  absl::Status enqueue_copies(Staged& staged);
  absl::Status drain();

  std::shared_ptr<BatchSource> source_;
  Device device_;
  cuda::Stream stream_;
  bool primed_ = false;
  absl::StatusOr<std::optional<Staged>> staged_ = std::nullopt;
  // The host side of the batch returned last: its copy may still be running
  // when next() returns, so its buffers stay here until the next call.
  std::vector<Tensor> handed_out_host_;
  std::optional<cuda::Event> handed_out_copied_;
};

}  // namespace ts::data
