#include "tensor/cuda/stream.h"

#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"

namespace ts::cuda {

namespace {

// Streams no Stream owns, by device and priority, for the next create().
class IdleStreams {
 public:
  cudaStream_t take(int device, int priority) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<cudaStream_t>& idle = idle_[{device, priority}];
    if (idle.empty()) return nullptr;
    cudaStream_t stream = idle.back();
    idle.pop_back();
    return stream;
  }
  void give(int device, int priority, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_[{device, priority}].push_back(stream);
  }

 private:
  std::mutex mu_;
  absl::flat_hash_map<std::pair<int, int>, std::vector<cudaStream_t>> idle_;
};

IdleStreams& idle_streams() {
  static IdleStreams* streams = new IdleStreams;  // never destroyed: Streams may outlive main
  return *streams;
}

}  // namespace

absl::StatusOr<Stream> Stream::create(int device, int priority) {
  if (auto s = check_device(device); !s.ok()) return s;
  if (cudaStream_t idle = idle_streams().take(device, priority)) return Stream(idle, device, priority);
  DeviceGuard guard(device);
  cudaStream_t stream = nullptr;
  RETURN_IF_CUDA_ERROR(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, priority));
  return Stream(stream, device, priority);
}

Stream::Stream(Stream&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)), device_(other.device_), priority_(other.priority_) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  std::swap(stream_, other.stream_);
  std::swap(device_, other.device_);
  std::swap(priority_, other.priority_);
  return *this;
}

Stream::~Stream() {
  if (stream_ != nullptr) idle_streams().give(device_, priority_, stream_);
}

absl::Status Stream::synchronize() const {
  RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream_));
  return absl::OkStatus();
}

absl::StatusOr<Event> Event::create(bool enable_timing) {
  cudaEvent_t event = nullptr;
  RETURN_IF_CUDA_ERROR(cudaEventCreateWithFlags(&event, enable_timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(event);
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  std::swap(event_, other.event_);
  return *this;
}

Event::~Event() {
  if (event_ != nullptr) CHECK_CUDA(cudaEventDestroy(event_));
}

absl::Status Event::record(cudaStream_t stream) {
  RETURN_IF_CUDA_ERROR(cudaEventRecord(event_, stream));
  return absl::OkStatus();
}

absl::Status Event::block(cudaStream_t stream) const {
  RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(stream, event_, 0));
  return absl::OkStatus();
}

absl::StatusOr<bool> event_completed(cudaEvent_t event) {
  const cudaError_t e = cudaEventQuery(event);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  RETURN_IF_CUDA_ERROR(e);
  return true;
}

absl::StatusOr<bool> Event::query() const { return event_completed(event_); }

absl::Status Event::synchronize() const {
  RETURN_IF_CUDA_ERROR(cudaEventSynchronize(event_));
  return absl::OkStatus();
}

absl::StatusOr<float> Event::elapsed_ms(const Event& later) const {
  float ms = 0;
  RETURN_IF_CUDA_ERROR(cudaEventElapsedTime(&ms, event_, later.event_));
  return ms;
}

namespace {
// Per thread, per device; absent means the legacy default stream.
thread_local absl::flat_hash_map<int, cudaStream_t> current_streams;
}  // namespace

cudaStream_t current_stream(int device) {
  auto it = current_streams.find(device);
  return it == current_streams.end() ? nullptr : it->second;
}

StreamGuard::StreamGuard(const Stream& stream) : StreamGuard(stream.get(), stream.device()) {}

StreamGuard::StreamGuard(cudaStream_t stream, int device) : device_(device), previous_(current_stream(device)) {
  current_streams[device] = stream;
}

StreamGuard::~StreamGuard() { current_streams[device_] = previous_; }

}  // namespace ts::cuda
