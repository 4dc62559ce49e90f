#include "tasks/common/exit_code.h"

#include <cstdio>
#include <string>

#include "base/error.h"
#include "collectives/mpi/mpi_runtime.h"

namespace ts::tasks {

int run_to_exit_code(absl::string_view name, const std::function<absl::Status()>& body) {
  const absl::Status status = capture(body);
  collectives::mpi::finalize();
  if (status.ok()) return 0;
  std::fprintf(stderr, "%s: %s\n", std::string(name).c_str(), std::string(status.message()).c_str());
  return 1;
}

}  // namespace ts::tasks
