#include "tasks/common/distributed.h"

#include "base/status_macros.h"
#include "collectives/world.h"

namespace ts::tasks {

absl::StatusOr<Distributed> init_distributed(const collectives::LaunchEnvironment& env, const Device& device,
                                             bool force_ddp) {
  Distributed d;
  d.env = env;
  if (d.env.world_size > 1 || force_ddp) {
    ASSIGN_OR_RETURN(collectives::CommunicatorOptions options, collectives::CommunicatorOptions::from_flags_and_env());
    ASSIGN_OR_RETURN(d.comm, collectives::connect_world(d.env, device, options));
  }
  return d;
}

}  // namespace ts::tasks
