#include "collectives/world.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collectives/mpi/mpi_communicator.h"
#include "collectives/nccl/nccl_communicator.h"
#include "collectives/rendezvous.h"

namespace ts::collectives {
namespace {

// MPI_Init outside mpirun (torchrun-style variables, srun without PMI) starts
// each process as a world of its own: every rank would train alone on its
// shard of the data, with nothing to say so.
absl::Status check_mpi_matches_launch(const Communicator& mpi, const LaunchEnvironment& env) {
  if (mpi.world_size() == env.world_size && mpi.rank() == env.rank) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("MPI sees rank ", mpi.rank(), " of ", mpi.world_size(), ", but the launcher (",
                   source_name(env.source), ") says rank ", env.rank, " of ", env.world_size,
                   ": the CPU backend's ranks meet through MPI, so start the job with mpirun (or srun --mpi=pmix)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Communicator>> connect_world(const LaunchEnvironment& env, const Device& device,
                                                            const CommunicatorOptions& options) {
  if (!device.is_cuda()) {
    ASSIGN_OR_RETURN(std::unique_ptr<mpi::MpiCommunicator> comm, mpi::MpiCommunicator::create(options));
    RETURN_IF_ERROR(check_mpi_matches_launch(*comm, env));
    return std::unique_ptr<Communicator>(std::move(comm));
  }
  std::unique_ptr<nccl::NcclCommunicator> comm;
  if (env.world_size == 1) {
    // Rank 0's id is the only one.
    ASSIGN_OR_RETURN(comm, nccl::NcclCommunicator::create(
                               env, device.index, [](const std::string& id) { return id; }, options));
  } else if (env.source == LaunchEnvironment::Source::kOpenMpi) {
    // The MPI communicator only carries the id; NCCL keeps no reference to it.
    ASSIGN_OR_RETURN(std::unique_ptr<mpi::MpiCommunicator> host, mpi::MpiCommunicator::create(options));
    RETURN_IF_ERROR(check_mpi_matches_launch(*host, env));
    ASSIGN_OR_RETURN(comm, nccl::NcclCommunicator::create(env, device.index, nccl::mpi_id_broadcast(*host), options));
  } else {
    if (env.master_addr.empty() || env.master_port == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("NCCL for rank ", env.rank, " of ", env.world_size, " (launched by ", source_name(env.source),
                       ", not mpirun) needs MASTER_ADDR and MASTER_PORT for its rendezvous"));
    }
    ASSIGN_OR_RETURN(
        std::unique_ptr<TcpRendezvous> rendezvous,
        TcpRendezvous::connect(env.master_addr, env.master_port, env.rank, env.world_size, options.timeout));
    ASSIGN_OR_RETURN(comm, nccl::NcclCommunicator::create(
                               env, device.index,
                               [&rendezvous](const std::string& id) { return rendezvous->broadcast(id); }, options));
  }
  return std::unique_ptr<Communicator>(std::move(comm));
}

}  // namespace ts::collectives
