// MLBench task 0's message sizes: np.logspace(0, 8, num=80) cast to int
// (truncated) and deduplicated, up to a maximum.
#pragma once

#include <cstdint>
#include <vector>

namespace ts::tasks::comm_bench {

std::vector<int64_t> logspace_sizes(int64_t max_size, int num = 80, double stop_exponent = 8);

}  // namespace ts::tasks::comm_bench
