// For exit_code_mpi_test.sh, under mpirun -np 2: rank 1 fails on its own
// while rank 0 waits for it in an allreduce whose timeout (120 s) is longer
// than the test allows. run_to_exit_code must print rank 1's error at once
// and end the job, not wait in MPI_Finalize for rank 0's timeout.
#include <memory>

#include "absl/time/time.h"
#include "base/status_macros.h"
#include "collectives/environment.h"
#include "collectives/world.h"
#include "tasks/common/exit_code.h"
#include "tensor/ops.h"

int main() {
  return ts::tasks::run_to_exit_code("exit_code_probe", []() -> absl::Status {
    using namespace ts::collectives;
    ASSIGN_OR_RETURN(const LaunchEnvironment env, discover_environment());
    CommunicatorOptions options;
    options.timeout = absl::Seconds(120);
    ASSIGN_OR_RETURN(std::unique_ptr<Communicator> comm, connect_world(env, ts::Device::cpu(), options));
    if (comm->rank() == 1) return absl::InternalError("rank 1 stops on its own (the cause)");
    return comm->allreduce(ts::ones({4}), ReduceOp::kSum).synchronize();
  });
}
