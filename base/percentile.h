// Percentiles of a sample, as NumPy's np.percentile computes them by default
// (linear interpolation between the closest ranks), so that figures match
// the PyTorch and Bluefog benchmark scripts that use it.
#pragma once

#include <vector>

namespace ts {

// The p-th percentile (p in [0, 100], clamped) of `values`; NaN when empty.
double percentile(std::vector<double> values, double p);

}  // namespace ts
