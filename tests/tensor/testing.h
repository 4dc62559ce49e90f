// Test support for the tensor library: random inputs in any dtype and layout,
// a float64 reference tensor with naive helpers (broadcasting, reductions,
// matmul, softmax), tolerances per dtype, comparison that reports the worst
// element, and inputs moved to another device with their layout.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "tensor/cuda/device.h"
#include "tensor/ops.h"

namespace ts::testing {

// gtest assertions on absl::Status / StatusOr.
#define TS_TESTING_CONCAT_INNER_(a, b) a##b
#define TS_TESTING_CONCAT_(a, b) TS_TESTING_CONCAT_INNER_(a, b)
#define ASSERT_OK(expr)                                   \
  do {                                                    \
    const ::absl::Status ts_test_status_ = (expr);        \
    ASSERT_TRUE(ts_test_status_.ok()) << ts_test_status_; \
  } while (false)
#define EXPECT_OK(expr)                                   \
  do {                                                    \
    const ::absl::Status ts_test_status_ = (expr);        \
    EXPECT_TRUE(ts_test_status_.ok()) << ts_test_status_; \
  } while (false)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  TS_ASSERT_OK_AND_ASSIGN_IMPL_(TS_TESTING_CONCAT_(ts_test_statusor_, __LINE__), lhs, expr)
#define TS_ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  ASSERT_TRUE(statusor.ok()) << statusor.status();         \
  lhs = std::move(statusor).value()

// For helpers that cannot use ASSERT_*: a failed status ends the test binary
// with the message (it means the harness itself is broken).
inline void ok_or_die(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "fatal in test harness: %s\n", std::string(s.message()).c_str());
    std::abort();
  }
}
template <typename T>
T value_or_die(absl::StatusOr<T> s) {
  ok_or_die(s.status());
  return *std::move(s);
}

// Skips the current test, visibly, when no CUDA device can be used.
#define TS_SKIP_WITHOUT_CUDA()                                                \
  do {                                                                        \
    if (!::ts::cuda::is_available()) {                                        \
      GTEST_SKIP() << "no CUDA device: " << ::ts::cuda::unavailable_reason(); \
    }                                                                         \
  } while (false)

// Seeds for the "fresh random inputs" of each test: from TS_TEST_SEED when
// set (to replay a failure), else from the clock. The seed is printed in
// every failure message through a SCOPED_TRACE set up by SeededTest.
uint64_t test_seed();

class SeededTest : public ::testing::Test {
 protected:
  SeededTest() : seed_(test_seed()), trace_(__FILE__, __LINE__, "TS_TEST_SEED=" + std::to_string(seed_)) {}
  uint64_t seed() const { return seed_; }
  std::mt19937_64& rng() { return rng_; }

 private:
  uint64_t seed_;
  ::testing::ScopedTrace trace_;
  std::mt19937_64 rng_{seed_};
};

// How a test input is laid out in memory; the logical shape is the same.
enum class Layout {
  kContiguous,
  kTransposed,  // the last two dims swapped in memory (a permuted view)
  kStrided,     // every other element of a larger buffer along the last dim
};

// Uniform values in [lo, hi) (integers: whole numbers in that range; bool:
// random), rounded to `dtype`, on the CPU, laid out as asked.
Tensor random_tensor(std::mt19937_64& rng, Dims shape, DType dtype, double lo = -1, double hi = 1,
                     Layout layout = Layout::kContiguous);

// The float64 reference: row-major values with a shape.
struct Ref {
  Shape shape;
  std::vector<double> v;

  int64_t numel() const { return static_cast<int64_t>(v.size()); }
  // Row-major index of a multi-index.
  int64_t index(Dims coords) const;
};

Ref ref_of(const Tensor& t);  // exact for every dtype but i64 beyond 2^53
Ref ref_map(const Ref& x, const std::function<double(double)>& f);
// NumPy broadcasting of two references.
Ref ref_zip(const Ref& a, const Ref& b, const std::function<double(double, double)>& f);
// x broadcast to `shape`.
Ref ref_expand(const Ref& x, Dims shape);
// Reduces the dims in `dims` (empty: all) by calling f on each group's
// values in row-major order.
Ref ref_reduce(const Ref& x, Dims dims, bool keepdim, const std::function<double(const std::vector<double>&)>& f);
// Rounds every value to dtype (what a result in that dtype can hold).
Ref ref_round(const Ref& x, DType dtype);
// torch.matmul of two references. Returns the product and, per element, the
// sum of |a||b| over its terms (what bounds the rounding error of any
// summation order).
std::pair<Ref, Ref> ref_matmul(Ref a, Ref b);
// Softmax (log-softmax when `log`) of x along dim, subtracting the max first.
Ref ref_softmax(const Ref& x, int64_t dim, bool log);

// Largest relative error tolerated against the float64 reference.
double tolerance(DType dtype);

// The gap between adjacent values of floating `dtype` at magnitude |x| (one
// ulp): 2^(e - 1 - m) for |x| in [2^(e-1), 2^e) with m stored mantissa
// bits, the smallest subnormal below the normal range. The gap below a
// power of two in the normal range is half of it.
double spacing(double x, DType dtype);

// Expects actual (any device, any layout) to match the reference in shape
// and, per element, |a - e| <= tol * max(|e|, floor). NaNs must match NaNs.
// `floor` keeps results near zero from demanding impossible relative accuracy
// (for reductions, pass the magnitude of the summands).
void expect_close(const Tensor& actual, const Ref& expected, double tol, double floor = 1e-3,
                  const std::string& what = "");
// Exact equality (integer and bool results).
void expect_equal(const Tensor& actual, const Ref& expected, const std::string& what = "");

// t on `device` with t's layout (shape, strides, offset): its whole storage
// moves, so strided kernels run there too. With `extra_offset`, the storage
// has that many more elements in front, so t starts further in (an odd count
// leaves it unaligned for vector loads).
Tensor to_device_keeping_layout(const Tensor& t, Device device, int64_t extra_offset = 0);
// Expects `actual` (computed on another device) to match the CPU's result:
// exactly for integer and bool results, else within the dtype's tolerance
// relative to the CPU result, floored at 1e-3 of its largest magnitude (the
// devices accumulate differently). `normwise`: relative to its largest
// magnitude, for sums of many terms (reductions, products), where an output
// that cancels to near zero keeps the summands' absolute error.
void expect_close_to_cpu(const Tensor& actual, const Tensor& cpu_result, bool normwise = false,
                         const std::string& what = "");

// Expects `status` to fail with `code` and a message containing each of
// `fragments` (the op name, the shapes).
void expect_error(const absl::Status& status, absl::StatusCode code, const std::vector<std::string>& fragments);
// Expects `f` to throw a ts::Error with `code` and a message containing each
// of `fragments`: expect_throws(kInvalidArgument, {"matmul", "[2, 3]"}, [&] { matmul(a, b); });
void expect_throws(absl::StatusCode code, const std::vector<std::string>& fragments, const std::function<void()>& f);

}  // namespace ts::testing
