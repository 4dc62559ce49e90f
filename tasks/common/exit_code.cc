#include "tasks/common/exit_code.h"

#include <cstdio>
#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "base/error.h"
#include "collectives/mpi/mpi_runtime.h"

namespace ts::tasks {
namespace {

// The payloads that mark an error every rank ends with, and one rank 0
// prints for every rank.
constexpr absl::string_view kSharedByAllRanks = "type.trainstack/shared_by_all_ranks";
constexpr absl::string_view kSaidByRank0 = "type.trainstack/said_by_rank_0";

}  // namespace

absl::Status said_by_rank_0(bool leader, absl::Status status) {
  if (!leader && !status.ok()) status.SetPayload(kSaidByRank0, absl::Cord());
  return shared_by_all_ranks(std::move(status));
}

absl::Status shared_by_all_ranks(absl::Status status) {
  if (!status.ok()) status.SetPayload(kSharedByAllRanks, absl::Cord());
  return status;
}

int run_to_exit_code(absl::string_view name, const std::function<absl::Status()>& body) {
  const absl::Status status = capture(body);
  if (!status.ok() && !status.GetPayload(kSaidByRank0).has_value()) {
    std::fprintf(stderr, "%s: %s\n", std::string(name).c_str(), std::string(status.message()).c_str());
    std::fflush(stderr);
  }
  if (!status.ok() && !status.GetPayload(kSharedByAllRanks).has_value()) collectives::mpi::mark_failed();
  collectives::mpi::finalize();
  return status.ok() ? 0 : 1;
}

}  // namespace ts::tasks
