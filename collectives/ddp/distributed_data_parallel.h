// DistributedDataParallel: one model replica per rank, kept identical. At
// construction the ranks check they hold the same model and take rank 0's
// parameters and buffers; begin_step(), before each forward, takes rank 0's
// buffers (broadcast_buffers, e.g. BatchNorm running statistics) when a
// synchronized forward may have moved them apart; each
// backward averages the gradients across ranks in buckets overlapped with
// backward (see reducer.h). Semantics follow
// torch.nn.parallel.DistributedDataParallel, except that the wrapper does not
// call the forward: modules have typed forwards of their own, which the
// caller calls after begin_step().
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

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
  // Rank 0's parameters (at the start) and buffers (each step) travel packed
  // by dtype, in broadcasts of at most this many bytes (about PyTorch's
  // broadcast_bucket_size, 250 MiB; the packed copy is transient memory).
  int64_t broadcast_bucket_bytes = int64_t{256} << 20;
};

class DistributedDataParallel {
 public:
  // `comm` must outlive the wrapper; the module must already be on its device.
  static absl::StatusOr<std::unique_ptr<DistributedDataParallel>> create(std::shared_ptr<nn::Module> module,
                                                                         Communicator* comm, DdpOptions options = {});

  // Call before each forward of the module, evaluation ones included
  // (PyTorch's DDP forward prologue): takes rank 0's buffers (when
  // broadcast_buffers) if this is the first forward since a synchronized one
  // (grad mode on, outside no_sync()), as PyTorch's require_forward_param_sync
  // has it: the first micro-step of an accumulation and the first evaluation
  // forward after training take them, the later ones run on what they have.
  // When grad mode is on, outside no_sync(), and the module is training, it
  // arms gradient averaging for the backward that follows. Fails if the
  // previous backward left parameters without a gradient, naming them. A
  // backward in training mode that no begin_step() armed throws a ts::Error
  // (kFailedPrecondition) rather than leave the ranks' gradients apart
  // (under no_sync() there is nothing to average and none is needed).
  absl::Status begin_step();

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

  // Fails if the synchronized backward since begin_step() left parameters
  // without a gradient, naming them; call it before the optimizer step,
  // whose gradients would otherwise be this rank's own.
  absl::Status check_backward_complete() const { return reducer_->check_backward_complete(); }

  // The buckets' fill order once the first synchronized backward has set
  // it (nullopt before), for a checkpoint; a resumed run restores it before
  // its first step (see GradientReducer::ready_order_plan).
  std::optional<std::vector<int>> bucket_fill_order() const { return reducer_->ready_order_plan(); }
  absl::Status restore_bucket_fill_order(std::vector<int> order) { return reducer_->plan_in_order(std::move(order)); }

  const GradientReducer& reducer() const { return *reducer_; }
  // Time training stood still on communication so far: buffer broadcasts
  // in begin_step() and gradient averaging at the ends of backward.
  absl::StatusOr<absl::Duration> communication_wait_time();

 private:
  DistributedDataParallel(std::shared_ptr<nn::Module> module, Communicator* comm, DdpOptions options,
                          std::unique_ptr<GradientReducer> reducer, Device device);

  std::shared_ptr<nn::Module> module_;
  Communicator* comm_;
  DdpOptions options_;
  std::unique_ptr<GradientReducer> reducer_;
  CommWaitTimer broadcast_timer_;
  // Whether the last forward was a synchronized one, whose buffer updates
  // differ by rank (true at the start, as PyTorch's flag starts).
  bool buffers_apart_ = true;
};

}  // namespace ts::collectives::ddp
