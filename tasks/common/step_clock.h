// Step times without stalling the host. On the CPU a step's time is the host
// clock around it. On CUDA the host only queues a step's work, so its time is
// read from events recorded on the compute stream at step boundaries, and
// only when the times are taken: the host keeps queueing step N+1 while the
// device runs step N.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "tensor/cuda/stream.h"
#include "tensor/device.h"

namespace ts::tasks {

struct TimedStep {
  double seconds = 0;
  int64_t samples = 0;
};

class StepClock {
 public:
  // `host_clock`: monotonic seconds (tests substitute a fake one).
  StepClock(Device device, std::function<double()> host_clock);

  // Around each step. Back-to-back steps share a boundary, so the device's
  // idle time between them (waiting for the host's next batch) counts in
  // the step time, as it does in throughput.
  absl::Status start();
  absl::Status stop(int64_t samples);
  // Ends a run of back-to-back steps (before an evaluation or a checkpoint,
  // whose time is not a step's).
  void pause() { last_stop_.reset(); }

  // The steps stopped since the last call, in order; on CUDA this waits for
  // the device to reach the last of them.
  absl::StatusOr<std::vector<TimedStep>> take();

 private:
  // A moment on the host clock and, on CUDA, an event recorded then on the
  // compute stream (shared: one boundary ends a step and starts the next).
  struct Boundary {
    double host_seconds = 0;
    std::shared_ptr<cuda::Event> event;
  };
  struct Stopped {
    Boundary start, stop;
    int64_t samples = 0;
  };
  absl::StatusOr<Boundary> mark();

  Device device_;
  std::function<double()> host_clock_;
  std::vector<Stopped> stopped_;           // not taken yet
  std::optional<Boundary> running_since_;  // the step now running
  std::optional<Boundary> last_stop_;      // where a back-to-back step starts
};

}  // namespace ts::tasks
