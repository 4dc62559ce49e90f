#include "collectives/mpi/debug_check.h"

#include <memory>
#include <vector>

#include "collectives/mpi/mpi_runtime.h"

namespace ts::collectives::mpi {

Round signature_check_round(MPI_Comm comm, int rank, int world_size, const CallSignature& mine) {
  auto all = std::make_shared<std::vector<CallSignature>>(world_size);
  auto own = std::make_shared<CallSignature>(mine);
  return Round{[=](std::vector<MPI_Request>& requests) -> absl::Status {
                 MPI_Request request;
                 if (absl::Status s = check(MPI_Iallgather(own.get(), sizeof(CallSignature), MPI_BYTE, all->data(),
                                                           sizeof(CallSignature), MPI_BYTE, comm, &request),
                                            "MPI_Iallgather (debug signature check)");
                     !s.ok()) {
                   return s;
                 }
                 requests.push_back(request);
                 return absl::OkStatus();
               },
               [=]() { return check_call_signatures(*all, rank); },
               {},
               /*posts_mpi_collective=*/true};
}

}  // namespace ts::collectives::mpi
