// parallel_for over an index range on a process-wide pool of worker threads
// (one per core this process may run on, or TS_NUM_THREADS). Small ranges and nested calls run inline
// on the calling thread.
#pragma once

#include <cstdint>
#include <functional>

namespace ts::cpu {

int num_threads();

// Calls fn(begin, end) on disjoint chunks covering [0, n), in parallel when n
// is at least `grain` per thread. Returns after every chunk has run.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace ts::cpu
