// The ranks of a task run: a single process, or the ranks of an mpirun/srun
// launch (collectives/environment.h) joined by a communicator for the device
// they train on (collectives/world.h: MPI on the CPU, NCCL on GPUs). Rank r of
// n trains on shard r of the data; rank 0 reports.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/environment.h"
#include "tensor/device.h"

namespace ts::tasks {

struct Distributed {
  collectives::LaunchEnvironment env;
  // Null for a single process unless the config forces DDP.
  std::unique_ptr<collectives::Communicator> comm;

  int rank() const { return env.rank; }
  int world_size() const { return env.world_size; }
};

// With more than one rank, or with `force_ddp`, connects the communicator for
// `device` (every rank must call this).
absl::StatusOr<Distributed> init_distributed(const collectives::LaunchEnvironment& env, const Device& device,
                                             bool force_ddp);

}  // namespace ts::tasks
