// CUDA streams and events as owning RAII types, and the per-thread "current
// stream" of each device that ops enqueue their work on.
#pragma once

#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"

namespace ts::cuda {

// An owned stream (created non-blocking, so it never serializes with the
// legacy default stream) on one device. A dropped stream is not destroyed
// but kept for the next create() of its device and priority: the caching
// allocator remembers the streams that used each block (record_stream) and
// records events on them when the block is freed, which may be after the
// Stream is gone (a tensor outliving the communicator that reduced it).
// PyTorch pools its streams and never destroys them for the same reason.
// Work queued by a previous owner stays ahead of the next owner's.
class Stream {
 public:
  static absl::StatusOr<Stream> create(int device, int priority = 0);
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  absl::Status synchronize() const;

 private:
  Stream(cudaStream_t stream, int device, int priority) : stream_(stream), device_(device), priority_(priority) {}
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
  int priority_ = 0;
};

// An owned event, timing disabled unless asked for (cheaper to record/wait).
class Event {
 public:
  static absl::StatusOr<Event> create(bool enable_timing = false);
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  cudaEvent_t get() const { return event_; }
  absl::Status record(cudaStream_t stream);
  // Makes `stream` wait (on the device) until this event has completed.
  absl::Status block(cudaStream_t stream) const;
  absl::StatusOr<bool> query() const;  // true once complete
  absl::Status synchronize() const;
  // Milliseconds between this event and a later one (both timing-enabled).
  absl::StatusOr<float> elapsed_ms(const Event& later) const;

 private:
  explicit Event(cudaEvent_t event) : event_(event) {}
  cudaEvent_t event_ = nullptr;
};

// Whether `event` has completed. A "not ready" is no error: the runtime
// records it as the thread's last error, which is cleared here, or the next
// launch check (cudaGetLastError after a kernel) would report it.
absl::StatusOr<bool> event_completed(cudaEvent_t event);

// The stream ops on `device` use in this thread; the legacy default stream
// unless a StreamGuard says otherwise.
cudaStream_t current_stream(int device);

// Sets the current stream of its device for the calling thread and scope.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  StreamGuard(cudaStream_t stream, int device);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  int device_;
  cudaStream_t previous_;
};

}  // namespace ts::cuda
