// Debug mode of the MPI backend: a round, run before the collective itself,
// that allgathers every rank's CallSignature and fails on the first mismatch.
#pragma once

#include <mpi.h>

#include "collectives/call_signature.h"
#include "collectives/mpi/engine.h"

namespace ts::collectives::mpi {

Round signature_check_round(MPI_Comm comm, int rank, int world_size, const CallSignature& mine);

}  // namespace ts::collectives::mpi
