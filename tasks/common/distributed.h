// The ranks of a task run: a single process, or the ranks of an mpirun/srun
// launch (collectives/environment.h) joined by a communicator: MPI for CPU
// training. Rank r of n trains on shard r of the data; rank 0 reports.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/environment.h"

namespace ts::tasks {

struct Distributed {
  collectives::LaunchEnvironment env;
  // Null for a single process.
  std::unique_ptr<collectives::Communicator> comm;

  int rank() const { return env.rank; }
  int world_size() const { return env.world_size; }
};

// Reads the launch environment; with more than one rank, creates the MPI
// communicator (every rank must call this).
absl::StatusOr<Distributed> init_distributed();

}  // namespace ts::tasks
