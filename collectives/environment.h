// Where this process sits in a job: rank, world size, local rank and size,
// and the rendezvous address, discovered from the launcher's environment
// variables: Open MPI's, then Slurm's, then the plain RANK/WORLD_SIZE family
// that torchrun uses (before Slurm's when torchrun set them, as under
// `srun torchrun`: each worker inherits the srun task's SLURM_PROCID); none
// of them means a single process.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts::collectives {

struct LaunchEnvironment {
  enum class Source { kSingleProcess, kOpenMpi, kSlurm, kPlain };
  Source source = Source::kSingleProcess;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_size = 1;
  // For the TCP rendezvous (collectives/rendezvous.h); empty when unknown.
  std::string master_addr;
  int master_port = 0;
};

absl::string_view source_name(LaunchEnvironment::Source source);  // "open mpi", ...

// Reads variables through `getenv` (tests pass a fake environment). Errors
// name the variable at fault: not a number, or a rank outside the world.
using EnvLookup = std::function<std::optional<std::string>(absl::string_view name)>;
absl::StatusOr<LaunchEnvironment> discover_environment(const EnvLookup& getenv);
absl::StatusOr<LaunchEnvironment> discover_environment();  // the process's environment

// The first host of a Slurm node list: "node[03-05,9],gpu1" -> "node03".
absl::StatusOr<std::string> first_slurm_host(absl::string_view nodelist);
// Tasks on node `node_id` from SLURM_TASKS_PER_NODE: "2(x3),1" -> 2 for nodes
// 0-2 and 1 for node 3.
absl::StatusOr<int> slurm_tasks_on_node(absl::string_view tasks_per_node, int node_id);

}  // namespace ts::collectives
