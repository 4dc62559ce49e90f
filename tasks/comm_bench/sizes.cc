#include "tasks/comm_bench/sizes.h"

#include <cmath>

namespace ts::tasks::comm_bench {

std::vector<int64_t> logspace_sizes(int64_t max_size, int num, double stop_exponent) {
  // As numpy: exponents start + k * step, the last exactly `stop`; 10 ** y;
  // astype(int) truncates; np.unique keeps each value once, ascending.
  const double step = stop_exponent / (num - 1);
  std::vector<int64_t> sizes;
  for (int k = 0; k < num; ++k) {
    const double y = k == num - 1 ? stop_exponent : k * step;
    const int64_t n = static_cast<int64_t>(std::pow(10.0, y));
    if (n > max_size) break;
    if (sizes.empty() || sizes.back() != n) sizes.push_back(n);
  }
  return sizes;
}

}  // namespace ts::tasks::comm_bench
