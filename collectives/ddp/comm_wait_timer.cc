#include "collectives/ddp/comm_wait_timer.h"

#include "base/status_macros.h"
#include "tensor/cuda/device.h"

namespace ts::collectives::ddp {

absl::Status CommWaitTimer::begin() {
  if (!device_.is_cuda()) {
    host_start_ = absl::Now();
    return absl::OkStatus();
  }
  cuda::DeviceGuard guard(device_.index);
  ASSIGN_OR_RETURN(cuda::Event start, cuda::Event::create(/*enable_timing=*/true));
  ASSIGN_OR_RETURN(cuda::Event stop, cuda::Event::create(/*enable_timing=*/true));
  RETURN_IF_ERROR(start.record(cuda::current_stream(device_.index)));
  unread_.emplace_back(std::move(start), std::move(stop));
  return absl::OkStatus();
}

absl::Status CommWaitTimer::end() {
  if (!device_.is_cuda()) {
    total_ += absl::Now() - host_start_;
    return absl::OkStatus();
  }
  cuda::DeviceGuard guard(device_.index);
  return unread_.back().second.record(cuda::current_stream(device_.index));
}

absl::StatusOr<absl::Duration> CommWaitTimer::total() {
  for (const auto& [start, stop] : unread_) {
    RETURN_IF_ERROR(stop.synchronize());
    ASSIGN_OR_RETURN(const float ms, start.elapsed_ms(stop));
    total_ += absl::Microseconds(static_cast<int64_t>(ms * 1000.0f));
  }
  unread_.clear();
  return total_;
}

}  // namespace ts::collectives::ddp
