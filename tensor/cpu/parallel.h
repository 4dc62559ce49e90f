// parallel_for over an index range on GNU OpenMP's thread team, the one
// threading runtime of the CPU backend: OpenBLAS (Debian's OpenMP build) and
// oneDNN run on the same team, so the three never spin against each other.
// Small ranges and nested calls (inside any OpenMP parallel region, ours,
// OpenBLAS's or oneDNN's) run inline on the calling thread.
#pragma once

#include <cstdint>
#include <functional>

namespace ts::cpu {

// omp_get_max_threads(): OMP_NUM_THREADS if set, else the cores this process
// may run on (its affinity mask, which mpirun's binding narrows).
int num_threads();

// Calls fn(begin, end) on disjoint chunks covering [0, n), each at least
// `grain` long (a range shorter than `grain` runs whole), in parallel when
// there is room for more than one such chunk and more than one thread. The calling thread runs chunk 0.
// Returns after every chunk has run; the first exception a chunk throws is
// rethrown here.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// From now on, everything the calling thread runs (parallel_for, OpenBLAS,
// oneDNN) runs on it alone. For threads that are one of several doing the
// same work (the data loader's workers, as PyTorch's run with one thread
// each): a team of their own each would compete with the training thread's
// for the cores.
void run_serially_on_this_thread();

}  // namespace ts::cpu
