#include "tasks/common/task_main.h"

#include <cstdio>
#include <string>

#include "base/error.h"
#include "base/status_macros.h"
#include "collectives/environment.h"
#include "tasks/common/config_diff.h"
#include "tasks/common/distributed.h"
#include "tasks/common/environment.h"
#include "tasks/common/exit_code.h"
#include "tasks/common/flags.h"
#include "tasks/common/stop_signals.h"
#include "tasks/common/trainer.h"
#include "tensor/random.h"

namespace ts::tasks {
namespace {

absl::Status train(int argc, char** argv, const TaskInfo& task, const RecipeFactory& make_recipe) {
  parse_task_command_line(argc, argv);
  ASSIGN_OR_RETURN(const collectives::LaunchEnvironment env, collectives::discover_environment());
  ASSIGN_OR_RETURN(TaskConfig config, config_from_flags(task.default_config, task.name));
  ASSIGN_OR_RETURN(const Device device, select_device(config.device(), env.local_rank));
  // The communicator is the device's (NCCL on GPUs, MPI on the CPU).
  ASSIGN_OR_RETURN(Distributed dist, init_distributed(env, device, config.force_ddp()));
  // Before the recipe reads its data: ranks given other flags would train
  // another run, or meet in different collectives while the recipe builds
  // its data (another data_path, say).
  if (dist.comm != nullptr) RETURN_IF_ERROR(check_ranks_share_config(*dist.comm, device, config));
  // Before the recipe builds its model: the initial weights come from it.
  manual_seed(config.seed());
  const TaskContext context{config, device, env.rank, env.world_size, dist.comm.get()};
  ASSIGN_OR_RETURN(std::unique_ptr<Recipe> recipe, make_recipe(context));
  TrainerOptions options;
  options.world_size = env.world_size;
  options.rank = env.rank;
  options.comm = dist.comm.get();
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::create(config, device, *recipe, options));
  // From here SIGTERM, SIGINT and SIGUSR1 stop the run at its next step,
  // with a checkpoint to resume from.
  const StopSignals stop_signals;
  return trainer->run().status();
}

}  // namespace

int run_task(int argc, char** argv, const TaskInfo& task, const RecipeFactory& make_recipe) {
  return run_to_exit_code(task.name, [&] { return train(argc, argv, task, make_recipe); });
}

}  // namespace ts::tasks
