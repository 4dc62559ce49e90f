// Test support for optimizer steps computed in one precision and stored in
// another (f16/bf16 parameters step in float): each stored value must be the
// exact float64 step rounded to its dtype, give or take what the compute
// type's own roundings may add before that last rounding. For 16-bit
// parameters that is about half an ulp of the dtype, so an update term as
// small as one step of weight decay (lr * weight_decay * p) shows.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::optim::testing {

// Unit roundoff of the type the optimizers compute in: double for f64
// parameters, float for the others.
inline double compute_roundoff(DType dtype) { return dtype == DType::kF64 ? 0x1p-53 : 0x1p-24; }

// Roundings a step may make before its result is stored, each at most one
// roundoff of the magnitudes involved: SGD rounds about 10 times, Adam about
// 15 (counting the coefficients converted to the compute type); twice that
// for margin.
inline constexpr double kComputeRoundings = 32;

// Expects got[i] == round_to_dtype(exact[i]) up to the compute type's error:
//   |got - exact| <= spacing(max(|got|, |exact|)) / 2
//                    + kComputeRoundings * roundoff * scale[i],
// `scale[i]` being the sum of the magnitudes the step's operations round.
inline void expect_rounding_of(const Tensor& got, const std::vector<double>& exact, const std::vector<double>& scale,
                               const std::string& what) {
  const std::vector<double> a = to_vector<double>(got);
  ASSERT_EQ(a.size(), exact.size()) << what;
  ASSERT_EQ(scale.size(), exact.size()) << what;
  const DType dtype = got.dtype();
  double worst = 0;  // error over what is allowed
  size_t worst_at = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double allowed = ts::testing::spacing(std::max(std::abs(a[i]), std::abs(exact[i])), dtype) / 2 +
                           kComputeRoundings * compute_roundoff(dtype) * scale[i];
    const double ratio = std::abs(a[i] - exact[i]) / allowed;
    if (std::isnan(ratio)) {
      ADD_FAILURE() << what << ": element " << i << " is " << a[i] << ", the exact step gives " << exact[i];
      return;
    }
    if (ratio > worst) {
      worst = ratio;
      worst_at = i;
    }
  }
  EXPECT_LE(worst, 1.0) << what << ": element " << worst_at << " is " << a[worst_at] << ", the exact step gives "
                        << exact[worst_at] << " (off by " << std::abs(a[worst_at] - exact[worst_at]) << ", "
                        << std::abs(a[worst_at] - exact[worst_at]) / ts::testing::spacing(exact[worst_at], dtype)
                        << " ulp of " << dtype_name(dtype) << "; allowed: half an ulp + "
                        << kComputeRoundings * compute_roundoff(dtype) * scale[worst_at] << ")";
}

}  // namespace ts::optim::testing
