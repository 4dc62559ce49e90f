#include "tasks/common/distributed.h"

#include "collectives/mpi/mpi_communicator.h"
#include "tensor/status_macros.h"

namespace ts::tasks {

absl::StatusOr<Distributed> init_distributed() {
  Distributed d;
  ASSIGN_OR_RETURN(d.env, collectives::discover_environment());
  if (d.env.world_size > 1) {
    ASSIGN_OR_RETURN(collectives::CommunicatorOptions options,
                     collectives::CommunicatorOptions::from_flags_and_env());
    ASSIGN_OR_RETURN(d.comm, collectives::mpi::MpiCommunicator::create(options));
  }
  return d;
}

}  // namespace ts::tasks
