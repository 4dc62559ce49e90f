// Host reduction loops the MPI backend's algorithms run between transfers:
// dst = op(a, b) elementwise for every dtype (f16/bf16 computed in f32 and
// rounded once per step, as NCCL does), and the final scaling of avg.
#pragma once

#include <cstdint>

#include "collectives/communicator.h"
#include "tensor/dtype.h"

namespace ts::collectives::mpi {

// dst may alias a (in-place accumulation); b must not overlap dst. avg
// reduces as sum (the caller scales once at the end).
void reduce_into(void* dst, const void* a, const void* b, int64_t n, DType dtype, ReduceOp op);

// data *= factor, for floating dtypes.
void scale(void* data, int64_t n, DType dtype, double factor);

}  // namespace ts::collectives::mpi
