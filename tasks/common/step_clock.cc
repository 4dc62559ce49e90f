#include "tasks/common/step_clock.h"

#include <utility>

#include "base/status_macros.h"
#include "tensor/cuda/device.h"

namespace ts::tasks {

StepClock::StepClock(Device device, std::function<double()> host_clock)
    : device_(device), host_clock_(std::move(host_clock)) {}

absl::StatusOr<StepClock::Boundary> StepClock::mark() {
  Boundary b;
  b.host_seconds = host_clock_();
  if (device_.is_cuda()) {
    // An event belongs to the device current when it is created, and must
    // be recorded on a stream of that device.
    cuda::DeviceGuard guard(device_.index);
    ASSIGN_OR_RETURN(cuda::Event event, cuda::Event::create(/*enable_timing=*/true));
    RETURN_IF_ERROR(event.record(cuda::current_stream(device_.index)));
    b.event = std::make_shared<cuda::Event>(std::move(event));
  }
  return b;
}

absl::Status StepClock::start() {
  if (running_since_) return absl::FailedPreconditionError("StepClock::start: the previous step was not stopped");
  if (last_stop_) {
    running_since_ = *last_stop_;
  } else {
    ASSIGN_OR_RETURN(running_since_, mark());
  }
  return absl::OkStatus();
}

absl::Status StepClock::stop(int64_t samples) {
  if (!running_since_) return absl::FailedPreconditionError("StepClock::stop: no step was started");
  ASSIGN_OR_RETURN(Boundary stop, mark());
  stopped_.push_back({*running_since_, stop, samples});
  running_since_.reset();
  last_stop_ = std::move(stop);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TimedStep>> StepClock::take() {
  std::vector<TimedStep> steps;
  steps.reserve(stopped_.size());
  for (const Stopped& s : stopped_) {
    double seconds = s.stop.host_seconds - s.start.host_seconds;
    if (device_.is_cuda()) {
      RETURN_IF_ERROR(s.stop.event->synchronize());
      ASSIGN_OR_RETURN(const float ms, s.start.event->elapsed_ms(*s.stop.event));
      seconds = ms / 1e3;
    }
    steps.push_back({seconds, s.samples});
  }
  stopped_.clear();
  return steps;
}

}  // namespace ts::tasks
