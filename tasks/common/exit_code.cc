#include "tasks/common/exit_code.h"

#include <cstdio>
#include <string>

#include "absl/strings/cord.h"
#include "base/error.h"
#include "collectives/mpi/mpi_runtime.h"

namespace ts::tasks {
namespace {

// The payload that marks an error rank 0 prints for every rank.
constexpr absl::string_view kSaidByRank0 = "type.trainstack/said_by_rank_0";

}  // namespace

absl::Status said_by_rank_0(bool leader, absl::Status status) {
  if (!leader && !status.ok()) status.SetPayload(kSaidByRank0, absl::Cord());
  return status;
}

int run_to_exit_code(absl::string_view name, const std::function<absl::Status()>& body) {
  const absl::Status status = capture(body);
  collectives::mpi::finalize();
  if (status.ok()) return 0;
  if (status.GetPayload(kSaidByRank0).has_value()) return 1;
  std::fprintf(stderr, "%s: %s\n", std::string(name).c_str(), std::string(status.message()).c_str());
  return 1;
}

}  // namespace ts::tasks
