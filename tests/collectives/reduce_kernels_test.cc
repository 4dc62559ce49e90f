// The MPI backend's host reduction loops: f16 sums (vectorized with F16C
// where the CPU has it) give exactly the bits of per-element f32 math
// rounded to f16, and f32/f64 sums those of scalar adds, at every length and
// alignment, in place too.
#include "collectives/mpi/reduce_kernels.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/half.h"

namespace ts::collectives::mpi {
namespace {

TEST(ReduceKernelsTest, F16SumMatchesScalarRounding) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-70000, 70000);  // overflows to inf at the edges
  for (int64_t n : {0, 1, 7, 8, 9, 31, 1000, 4099}) {
    for (int64_t offset : {0, 1, 3}) {
      std::vector<Half> a(n + offset), b(n + offset), out(n + offset);
      for (auto& x : a) x = Half(value(rng) / (rng() % 2 ? 1 : 5000));
      for (auto& x : b) x = Half(value(rng) / (rng() % 2 ? 1 : 5000));
      reduce_into(out.data() + offset, a.data() + offset, b.data() + offset, n, DType::kF16, ReduceOp::kSum);
      for (int64_t i = offset; i < n + offset; ++i) {
        const Half expected(static_cast<float>(a[i]) + static_cast<float>(b[i]));
        ASSERT_EQ(out[i].bits, expected.bits) << "n " << n << " offset " << offset << " i " << i;
      }
      // In place, as the ring does it.
      std::vector<Half> in_place = a;
      reduce_into(in_place.data() + offset, in_place.data() + offset, b.data() + offset, n, DType::kF16,
                  ReduceOp::kSum);
      for (int64_t i = offset; i < n + offset; ++i) ASSERT_EQ(in_place[i].bits, out[i].bits);
    }
  }
}

template <typename T>
void expect_sums_match_scalar_adds(DType dtype) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<T> value(-1, 1);
  for (int64_t n : {0, 1, 7, 15, 16, 17, 33, 1000, 4099}) {
    for (int64_t offset : {0, 1, 3}) {
      std::vector<T> a(n + offset), b(n + offset), out(n + offset);
      for (auto& x : a) x = value(rng);
      for (auto& x : b) x = value(rng);
      reduce_into(out.data() + offset, a.data() + offset, b.data() + offset, n, dtype, ReduceOp::kSum);
      std::vector<T> in_place = a;
      reduce_into(in_place.data() + offset, in_place.data() + offset, b.data() + offset, n, dtype, ReduceOp::kSum);
      for (int64_t i = offset; i < n + offset; ++i) {
        ASSERT_EQ(out[i], a[i] + b[i]) << dtype_name(dtype) << " n " << n << " offset " << offset << " i " << i;
        ASSERT_EQ(in_place[i], out[i]) << dtype_name(dtype) << " in place, n " << n << " i " << i;
      }
    }
  }
}

TEST(ReduceKernelsTest, F32AndF64SumsMatchScalarAdds) {
  expect_sums_match_scalar_adds<float>(DType::kF32);
  expect_sums_match_scalar_adds<double>(DType::kF64);
}

}  // namespace
}  // namespace ts::collectives::mpi
