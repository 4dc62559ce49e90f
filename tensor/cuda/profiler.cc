#include "tensor/cuda/profiler.h"

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

namespace ts::cuda {
namespace {

// A start or stop that fails is not the program's error. When none was
// pending, the call's own error is cleared, so that the next kernel launch's
// check does not find it; one pending before is left for that check (the
// call's error then stands in its place, still an error).
void call_leaving_no_new_error(cudaError_t (*call)()) {
  const cudaError_t pending = cudaPeekAtLastError();
  if (call() != cudaSuccess && pending == cudaSuccess) cudaGetLastError();
}

}  // namespace

ProfiledRegion::ProfiledRegion() { call_leaving_no_new_error(cudaProfilerStart); }
ProfiledRegion::~ProfiledRegion() { call_leaving_no_new_error(cudaProfilerStop); }

}  // namespace ts::cuda
