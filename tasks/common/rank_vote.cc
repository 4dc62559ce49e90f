#include "tasks/common/rank_vote.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "tasks/common/exit_code.h"

namespace ts::tasks {

absl::Status vote_on_differences(collectives::Communicator& comm, const Device& device, const std::string& differences,
                                 absl::string_view what) {
  ASSIGN_OR_RETURN(const std::vector<double> all,
                   collectives::allgather_values(comm, device, {differences.empty() ? 0.0 : 1.0}));
  std::vector<int> apart;
  for (int r = 0; r < comm.world_size(); ++r) {
    if (all[r] != 0) apart.push_back(r);
  }
  if (apart.empty()) return absl::OkStatus();
  // Every rank ends here, each with its line (see exit_code.h).
  if (!differences.empty()) {
    return shared_by_all_ranks(
        absl::FailedPreconditionError(absl::StrCat("rank ", comm.rank(), " differs from rank 0 in its ", what, " (",
                                                   differences, "): every rank must be given the same")));
  }
  return shared_by_all_ranks(absl::FailedPreconditionError(
      absl::StrCat("rank(s) ", absl::StrJoin(apart, ", "), " differ from rank 0 in their ", what,
                   " (each of them names how): every rank must be given the same")));
}

}  // namespace ts::tasks
