// Moves a loader's batches to a CUDA device one batch ahead: while the
// caller trains on batch k, batch k+1 is already being copied on the
// prefetcher's own stream. Each returned batch comes with its copy ordered
// before the caller's compute stream (an event the stream waits on), so no
// host synchronization is needed.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "data/loader/loader.h"
#include "tensor/cuda/stream.h"

namespace ts::data {

class DevicePrefetcher {
 public:
  // `loader` must outlive the prefetcher; `device` must be a usable CUDA
  // device (the error says how many there are).
  static absl::StatusOr<std::unique_ptr<DevicePrefetcher>> create(DataLoader* loader, Device device);
  // Waits for copies in flight, so host buffers go back to the pool unread.
  ~DevicePrefetcher();
  DevicePrefetcher(const DevicePrefetcher&) = delete;
  DevicePrefetcher& operator=(const DevicePrefetcher&) = delete;

  absl::Status start_epoch(int64_t epoch);
  // The next batch with every field on the device; the device's current
  // stream (the caller's compute stream, as cuda::current_stream sees it)
  // waits for its copy. nullopt at the end of the epoch; errors as
  // DataLoader::next.
  absl::StatusOr<std::optional<Batch>> next();

 private:
  struct Staged {
    Batch batch;                        // fields on the device
    std::vector<Tensor> host;           // the pinned sources, kept until copied
    std::optional<cuda::Event> copied;  // recorded after the copies
  };
  DevicePrefetcher(DataLoader* loader, Device device, cuda::Stream stream)
      : loader_(loader), device_(device), stream_(std::move(stream)) {}
  // Takes the loader's next batch and enqueues its copy on stream_.
  absl::StatusOr<std::optional<Staged>> stage();
  // Allocates the device fields (on stream_) and queues the copies and the
  // event; the current device and stream must be set.
  absl::Status enqueue_copies(Staged& staged);
  absl::Status drain();

  DataLoader* loader_;
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
