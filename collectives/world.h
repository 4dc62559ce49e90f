// The communicator that joins a job's ranks for training on a device: MPI for
// CPU tensors; NCCL for CUDA tensors, with rank 0's ncclUniqueId shared through
// MPI when Open MPI launched the job, else through the TCP rendezvous on
// MASTER_ADDR:MASTER_PORT (Slurm without MPI, torchrun-style variables).
// A world of one rank needs neither: NCCL keeps its own id, MPI starts as a
// singleton.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/environment.h"
#include "tensor/device.h"

namespace ts::collectives {

// Every rank must call it, with the device it trains on.
absl::StatusOr<std::unique_ptr<Communicator>> connect_world(const LaunchEnvironment& env, const Device& device,
                                                            const CommunicatorOptions& options);

}  // namespace ts::collectives
