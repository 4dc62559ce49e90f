#include "tasks/common/task_main.h"

#include <cstdio>
#include <string>

#include "collectives/mpi/mpi_runtime.h"
#include "tasks/common/flags.h"
#include "tensor/status_macros.h"

namespace ts::tasks {

absl::StatusOr<TaskStart> start_task(int argc, char** argv, absl::string_view default_config) {
  parse_task_command_line(argc, argv);
  TaskStart start;
  ASSIGN_OR_RETURN(const collectives::LaunchEnvironment env, collectives::discover_environment());
  RunnerOptions options;
  options.world_size = env.world_size;
  options.rank = env.rank;
  options.local_rank = env.local_rank;
  // The runner picks the device; the communicator is the device's.
  ASSIGN_OR_RETURN(start.runner, Runner::from_flags(default_config, options));
  ASSIGN_OR_RETURN(start.dist,
                   init_distributed(env, start.runner->device(), start.runner->config().force_ddp()));
  return start;
}

int finish_task(absl::string_view task, const absl::Status& status) {
  // mpirun counts a rank that exits without MPI_Finalize as a crash.
  collectives::mpi::finalize();
  if (status.ok()) return 0;
  std::fprintf(stderr, "%s: %s\n", std::string(task).c_str(), std::string(status.message()).c_str());
  return 1;
}

}  // namespace ts::tasks
