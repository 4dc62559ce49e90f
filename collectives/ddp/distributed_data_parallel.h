// DistributedDataParallel: one model replica per rank, kept identical. At
// construction the ranks check they hold the same model and take rank 0's
// parameters and buffers; each forward first takes rank 0's buffers
// (broadcast_buffers, e.g. BatchNorm running statistics); each backward
// averages the gradients across ranks in buckets overlapped with backward
// (see reducer.h). Semantics follow torch.nn.parallel.DistributedDataParallel.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/communicator.h"
#include "collectives/ddp/comm_wait_timer.h"
#include "collectives/ddp/reducer.h"
#include "nn/module.h"

namespace ts::collectives::ddp {

struct DdpOptions {
  ReducerOptions reducer;
  bool broadcast_buffers = true;
};

class DistributedDataParallel {
 public:
  // `comm` must outlive the wrapper; the module must already be on its device.
  static absl::StatusOr<std::unique_ptr<DistributedDataParallel>> create(
      std::shared_ptr<nn::Module> module, Communicator* comm, DdpOptions options = {});

  // Buffers from rank 0 (when broadcast_buffers), arms gradient sync when
  // grad mode is on and the module is training, then the module's forward.
  absl::StatusOr<autograd::Variable> forward(const autograd::Variable& x);

  // Within its scope backward only accumulates gradients locally; the first
  // backward after it averages the sums (gradient accumulation).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(GradientReducer& reducer) : reducer_(reducer), previous_(reducer.sync_enabled()) {
      reducer_.set_sync_enabled(false);
    }
    ~NoSyncGuard() { reducer_.set_sync_enabled(previous_); }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    GradientReducer& reducer_;
    bool previous_;
  };
  NoSyncGuard no_sync() { return NoSyncGuard(*reducer_); }

  nn::Module& module() { return *module_; }
  const std::shared_ptr<nn::Module>& shared_module() const { return module_; }
  const GradientReducer& reducer() const { return *reducer_; }
  // Time training stood still on communication so far: buffer broadcasts
  // before forwards and gradient averaging at the ends of backward.
  absl::StatusOr<absl::Duration> communication_wait_time();

 private:
  DistributedDataParallel(std::shared_ptr<nn::Module> module, Communicator* comm, DdpOptions options,
                          std::unique_ptr<GradientReducer> reducer, Device device)
      : module_(std::move(module)),
        comm_(comm),
        options_(options),
        reducer_(std::move(reducer)),
        broadcast_timer_(device) {}

  std::shared_ptr<nn::Module> module_;
  Communicator* comm_;
  DdpOptions options_;
  std::unique_ptr<GradientReducer> reducer_;
  CommWaitTimer broadcast_timer_;
};

}  // namespace ts::collectives::ddp
