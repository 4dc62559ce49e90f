#include "tasks/common/report_path.h"

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "tasks/common/exit_code.h"

namespace ts::tasks {

absl::Status check_report_path(collectives::Communicator& world, const Device& device, const std::string& path,
                               absl::string_view flag) {
  // Every rank takes part, whatever its own flag says: rank 0's path is
  // the one written, and the other ranks may not have been given one.
  const bool leader = world.rank() == 0;
  const absl::Status mine = leader && !path.empty() ? check_can_write(path) : absl::OkStatus();
  ASSIGN_OR_RETURN(const double holds, collectives::broadcast_value(world, device, mine.ok() ? 1 : 0));
  if (holds != 0) return absl::OkStatus();
  return said_by_rank_0(
      leader, leader ? absl::Status(mine.code(), absl::StrCat("--", flag, "=", path, ": ", mine.message()))
                     : absl::FailedPreconditionError(absl::StrCat("--", flag, ": rank 0 cannot write its path")));
}

}  // namespace ts::tasks
