// How long training stood still waiting on communication, for the
// compute/communication breakdown of every report. On the CPU, Work::wait()
// blocks the host, so the host clock measures the wait. On CUDA, wait()
// returns at once (it only orders the compute stream after the collective)
// and the stall happens on the device: timing events recorded on the compute
// stream around the waits measure it, read once the device has passed them.
#pragma once

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tensor/cuda/stream.h"
#include "tensor/device.h"

namespace ts::collectives::ddp {

class CommWaitTimer {
 public:
  explicit CommWaitTimer(Device device) : device_(device) {}

  // Bracket the waits on the device's current stream (CUDA) or the host.
  absl::Status begin();
  absl::Status end();

  // Everything measured so far. On CUDA it first waits until the device has
  // passed the last end(), which a step's loss.item() has done already.
  absl::StatusOr<absl::Duration> total();

 private:
  Device device_;
  absl::Time host_start_;
  std::vector<std::pair<cuda::Event, cuda::Event>> unread_;  // CUDA: begin/end pairs not yet read
  absl::Duration total_;
};

}  // namespace ts::collectives::ddp
