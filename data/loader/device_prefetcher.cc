#include "data/loader/device_prefetcher.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"

namespace ts::data {

absl::StatusOr<std::unique_ptr<DevicePrefetcher>> DevicePrefetcher::create(std::shared_ptr<BatchSource> source,
                                                                           Device device) {
  if (source == nullptr) return absl::InvalidArgumentError("DevicePrefetcher: no batch source given");
  if (!device.is_cuda()) {
    return absl::InvalidArgumentError(
        absl::StrCat("DevicePrefetcher: device must be a CUDA device, got ", device.to_string()));
  }
  RETURN_IF_ERROR(cuda::check_device(device.index));
  ASSIGN_OR_RETURN(cuda::Stream stream, cuda::Stream::create(device.index));
  return std::unique_ptr<DevicePrefetcher>(new DevicePrefetcher(std::move(source), device, std::move(stream)));
}

DevicePrefetcher::~DevicePrefetcher() {
  // A destructor cannot report; a failure here means the CUDA context is gone,
  // and then no copy is running either.
  (void)drain();
}

absl::Status DevicePrefetcher::drain() {
  RETURN_IF_ERROR(stream_.synchronize());
  staged_ = std::nullopt;
  handed_out_host_.clear();
  handed_out_copied_.reset();
  primed_ = false;
  return absl::OkStatus();
}

absl::Status DevicePrefetcher::start_epoch(int64_t epoch, int64_t first_batch) {
  RETURN_IF_ERROR(drain());
  return source_->start_epoch(epoch, first_batch);
}

absl::Status DevicePrefetcher::enqueue_copies(Staged& staged) {
  for (Tensor& field : staged.host) {
    TS_CHECK(field.device().is_cpu(), "DevicePrefetcher: batch ", staged.batch.index, " has a field on ",
             field.device().to_string(), "; its source must give host tensors");
    // The copies move bytes: a field that is a strided view (a window of a
    // longer stream, say) is made dense here first.
    field = contiguous(field);
    Tensor on_device = empty(field.shape(), {field.dtype(), device_});
    const int64_t bytes = field.numel() * field.itemsize();
    if (bytes > 0) {
      RETURN_IF_CUDA_ERROR(
          cudaMemcpyAsync(on_device.raw_data(), field.raw_data(), bytes, cudaMemcpyHostToDevice, stream_.get()));
    }
    staged.batch.fields.push_back(std::move(on_device));
  }
  ASSIGN_OR_RETURN(cuda::Event copied, cuda::Event::create());
  RETURN_IF_ERROR(copied.record(stream_.get()));
  staged.copied = std::move(copied);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<DevicePrefetcher::Staged>> DevicePrefetcher::stage() {
  ASSIGN_OR_RETURN(std::optional<Batch> host, source_->next());
  if (!host.has_value()) return std::nullopt;
  cuda::DeviceGuard device_guard(device_.index);
  // Device memory comes from the caching allocator on the copy stream; the
  // consumer's stream is recorded on it in next() before it is handed out.
  cuda::StreamGuard stream_guard(stream_);
  Staged staged{Batch{host->index, host->sample_indices, {}}, std::move(host->fields), std::nullopt};
  // Device allocation throws when the device is out of memory (and making a
  // field dense, when the host is); captured, the error waits in staged_ for
  // the next() it belongs to, like a loader error.
  absl::Status enqueued = capture([&] { return enqueue_copies(staged); });
  if (!enqueued.ok()) {
    // Copies already queued still read the host buffers about to be freed.
    (void)stream_.synchronize();
    return enqueued;
  }
  return std::optional<Staged>(std::move(staged));
}

absl::StatusOr<std::optional<Batch>> DevicePrefetcher::next() {
  cuda::DeviceGuard device_guard(device_.index);
  if (!primed_) {
    staged_ = stage();
    primed_ = true;
  }
  // The previous batch's copy is long finished in steady state; waiting for
  // it makes returning its pinned buffers to the pool safe.
  if (handed_out_copied_.has_value()) {
    RETURN_IF_ERROR(handed_out_copied_->synchronize());
    handed_out_copied_.reset();
    handed_out_host_.clear();
  }
  absl::StatusOr<std::optional<Staged>> current = std::move(staged_);
  if (current.ok() && !current->has_value()) return std::nullopt;  // end of epoch: nothing more to stage
  staged_ = stage();                                               // overlaps the caller's work on `current`
  if (!current.ok()) return current.status();

  Staged& ready = **current;
  const cudaStream_t compute = cuda::current_stream(device_.index);
  if (absl::Status blocked = ready.copied->block(compute); !blocked.ok()) {
    // Its copies may still read the host buffers that `current` frees.
    (void)stream_.synchronize();
    return blocked;
  }
  for (const Tensor& field : ready.batch.fields) {
    if (field.numel() > 0) cuda::caching_allocator(device_.index).record_stream(field.storage()->data(), compute);
  }
  handed_out_host_ = std::move(ready.host);
  handed_out_copied_ = std::move(ready.copied);
  return std::optional<Batch>(std::move(ready.batch));
}

}  // namespace ts::data
