// The NCCL backend of Communicator, for CUDA tensors: collectives run on a
// dedicated stream, ordered after the caller's current stream with an event
// and before it again on wait(); a watchdog thread polls
// ncclCommGetAsyncError and aborts the communicator (ncclCommAbort) when an
// operation outlives the timeout, so later calls fail instead of hanging.
#pragma once

#include <nccl.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/call_signature.h"
#include "collectives/communicator.h"
#include "collectives/environment.h"
#include "tensor/cuda/stream.h"

namespace ts::collectives::nccl {

class NcclCommunicator final : public Communicator {
 public:
  // Shares rank 0's ncclUniqueId (bytes) with every rank: through MPI
  // (mpi_id_broadcast) or the TCP rendezvous.
  using IdBroadcast = std::function<absl::StatusOr<std::string>(const std::string& id_on_rank0)>;

  // A communicator of env.world_size ranks on CUDA device `device`; every
  // rank must call it. Initialization itself is bounded by options.timeout.
  static absl::StatusOr<std::unique_ptr<NcclCommunicator>> create(const LaunchEnvironment& env, int device,
                                                                  const IdBroadcast& broadcast_id,
                                                                  CommunicatorOptions options = {});
  ~NcclCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  absl::string_view backend_name() const override { return "nccl"; }
  absl::Status health() const override { return broken(); }

  Work allreduce(const Tensor& tensor, ReduceOp op) override;
  Work broadcast(const Tensor& tensor, int root) override;
  Work allgather(const Tensor& output, const Tensor& input) override;
  Work reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op) override;
  Work exchange(absl::Span<const PeerTransfer> transfers) override;
  // Ordered on the streams like every collective; synchronize() on the
  // returned Work for a host-side barrier.
  Work barrier() override;
  absl::StatusOr<std::unique_ptr<Communicator>> split(int color, int key) override;

  cudaStream_t stream() const { return stream_.get(); }

 private:
  struct Pending;
  class NcclWork;
  class FirstFailure;

  NcclCommunicator(CommunicatorOptions options, int device, cuda::Stream stream, ncclComm_t comm, int rank,
                   int world_size, int local_rank, int local_size);
  // Numbers the call, runs the debug signature check when asked, then
  // launches it; `signature_tensor` names the call in errors.
  Work collective(absl::string_view op, const Tensor& signature_tensor, std::vector<Tensor> tensors,
                  const std::function<ncclResult_t(cudaStream_t)>& enqueue);
  // Debug mode: allgathers every rank's signature of the next call (over
  // NCCL, bounded by the watchdog) and reports the first mismatch.
  absl::Status check_signatures(const CallSignature& mine);
  // Orders the NCCL stream after the caller's, enqueues `enqueue` and hands
  // the operation to the watchdog.
  Work launch(std::string description, std::vector<Tensor> tensors,
              const std::function<ncclResult_t(cudaStream_t)>& enqueue);
  // With a nonblocking communicator, calls may return before NCCL is done
  // with them: polls until the communicator is ready or `timeout` (the
  // options' by default) has passed, then aborts it.
  absl::Status wait_ready(absl::string_view what);
  absl::Status wait_ready(absl::string_view what, absl::Duration timeout);
  void watchdog();
  // Runs an NCCL call on comm_ unless the communicator has failed, under
  // comm_mu_, so that an abort (which frees comm_) never runs during one.
  absl::StatusOr<ncclResult_t> call_nccl(const std::function<ncclResult_t()>& call);
  // Records the first failure (later calls fail with it) and aborts comm_.
  void fail_and_abort(absl::Status status);
  absl::Status broken() const;

  CommunicatorOptions options_;
  int device_;
  cuda::Stream stream_;
  ncclComm_t comm_;
  int rank_;
  int world_size_;
  int local_rank_;
  int local_size_;
  int64_t sequence_ = 0;
  Tensor barrier_scratch_;

  // Shared with the Works, which may outlive the communicator; it has its
  // own lock, taken last.
  std::shared_ptr<FirstFailure> failure_;
  // Lock order: comm_mu_, then mu_.
  std::mutex comm_mu_;     // held across every call on comm_
  bool aborted_ = false;   // guarded by comm_mu_
  mutable std::mutex mu_;  // guards the state below
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::vector<std::shared_ptr<Pending>> pending_;
  std::thread watchdog_;
};

// An IdBroadcast through an MPI-backed communicator (CPU tensors).
NcclCommunicator::IdBroadcast mpi_id_broadcast(Communicator& cpu_comm);

}  // namespace ts::collectives::nccl
