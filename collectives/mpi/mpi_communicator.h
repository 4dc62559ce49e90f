// The MPI backend of Communicator, for CPU tensors of every dtype: ring and
// recursive-doubling algorithms over nonblocking point-to-point calls, driven
// by the engine (engine.h) so each operation has a deadline.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/mpi/engine.h"

namespace ts::collectives::mpi {

class MpiCommunicator final : public Communicator {
 public:
  // Initializes MPI if needed and builds a communicator over MPI_COMM_WORLD.
  // Every rank must call it; a rank that never does makes the others fail
  // after options.timeout.
  static absl::StatusOr<std::unique_ptr<MpiCommunicator>> create(CommunicatorOptions options = {});
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  absl::string_view backend_name() const override { return "mpi"; }
  absl::Status health() const override { return engine_->health(); }

  Work allreduce(const Tensor& tensor, ReduceOp op) override;
  Work broadcast(const Tensor& tensor, int root) override;
  Work allgather(const Tensor& output, const Tensor& input) override;
  Work reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op) override;
  Work exchange(absl::Span<const PeerTransfer> transfers) override;
  Work barrier() override;
  absl::StatusOr<std::unique_ptr<Communicator>> split(int color, int key) override;

  // The communicator collectives run on, for callers that compare against
  // MPI directly (comm_bench's baseline). Do not send on it.
  MPI_Comm mpi_comm() const { return collective_comm_; }

 private:
  // Takes ownership of `base` (a duplicate made for this communicator).
  static absl::StatusOr<std::unique_ptr<MpiCommunicator>> create_from(MPI_Comm base, CommunicatorOptions options);
  MpiCommunicator(CommunicatorOptions options, MPI_Comm collective, MPI_Comm p2p, int rank, int world_size);

  // Starts a collective: the debug signature check (when on), then `rounds`.
  // `signature_tensor` and `also_held` stay alive until it ends.
  Work start_collective(std::string op, const Tensor& signature_tensor, int64_t sequence, std::vector<Round> rounds,
                        std::vector<Tensor> also_held = {});
  // In 64 bits: MPI_TAG_UB may be INT_MAX (Open MPI's is).
  int tag_for(int64_t sequence) const { return static_cast<int>(sequence % (int64_t{tag_ub_} + 1)); }

  CommunicatorOptions options_;
  MPI_Comm collective_comm_;
  MPI_Comm p2p_comm_;
  int rank_;
  int world_size_;
  int local_rank_ = 0;
  int local_size_ = 1;
  int tag_ub_ = 32767;
  int64_t sequence_ = 0;  // collectives started so far
  // Per peer: largest message sent eagerly (peers on this machine), 0 for
  // no known limit (see shared_memory_eager_bytes()).
  std::vector<int64_t> eager_bytes_by_peer_;
  std::shared_ptr<Engine> engine_;
};

}  // namespace ts::collectives::mpi
