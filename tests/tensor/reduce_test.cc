// Reductions and softmax against float64 references: every subset of dims,
// keepdim, non-contiguous inputs, f16/bf16 accumulation, long rows and
// columns that cross block boundaries, empty dims.
#include <omp.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "tests/openmp_teams.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::expect_close;
using testing::expect_equal;
using testing::Layout;
using testing::Ref;
using testing::ref_of;
using testing::ref_reduce;
using testing::ref_softmax;
using testing::tolerance;

double ref_sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
double ref_abs_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::abs(x);
  return s;
}
double ref_mean(const std::vector<double>& v) { return ref_sum(v) / v.size(); }
double ref_max(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
double ref_min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double ref_argmax(const std::vector<double>& v) { return std::max_element(v.begin(), v.end()) - v.begin(); }
double ref_argmin(const std::vector<double>& v) { return std::min_element(v.begin(), v.end()) - v.begin(); }
double ref_var(const std::vector<double>& v, double correction) {
  const double m = ref_mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / (v.size() - correction);
}
double ref_norm(const std::vector<double>& v, double p) {
  if (std::isinf(p)) {
    double m = 0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
  }
  double s = 0;
  for (double x : v) s += std::pow(std::abs(x), p);
  return std::pow(s, 1 / p);
}

// Every subset of the dims of a 3-D tensor, adjacent or not.
const std::vector<Shape> kDimSets = {{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {-1, 0}, {0, 1, 2}};

class ReduceTest : public testing::SeededTest {};

TEST_F(ReduceTest, SumMeanVarNormOverEveryDimSet) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (Layout layout : {Layout::kContiguous, Layout::kTransposed}) {
      const Tensor x = testing::random_tensor(rng(), {6, 7, 9}, dtype, -2, 2, layout);
      const Ref rx = ref_of(x);
      for (const Shape& dims : kDimSets) {
        for (bool keepdim : {false, true}) {
          const std::string what =
              absl::StrCat(dtype_name(dtype), " dims ", shape_str(dims), keepdim ? " keepdim" : "");
          // Sums are compared relative to the sum of magnitudes: that is
          // what bounds the rounding error of any summation order.
          const double floor = ref_max(ref_reduce(rx, dims, false, ref_abs_sum).v);
          Tensor s = sum(x, dims, keepdim);
          EXPECT_EQ(s.dtype(), dtype);
          expect_close(s, ref_reduce(rx, dims, keepdim, ref_sum), tolerance(dtype), floor, "sum " + what);
          Tensor m = mean(x, dims, keepdim);
          expect_close(m, ref_reduce(rx, dims, keepdim, ref_mean), tolerance(dtype), 1, "mean " + what);
          for (int64_t correction : {0, 1}) {
            Tensor v = var(x, dims, correction, keepdim);
            expect_close(
                v, ref_reduce(rx, dims, keepdim, [&](const std::vector<double>& g) { return ref_var(g, correction); }),
                tolerance(dtype), 1, absl::StrCat("var correction ", correction, " ", what));
          }
          for (double p : {1.0, 2.0, 3.0, std::numeric_limits<double>::infinity()}) {
            Tensor n = norm(x, p, dims, keepdim);
            expect_close(n, ref_reduce(rx, dims, keepdim, [&](const std::vector<double>& g) { return ref_norm(g, p); }),
                         tolerance(dtype), 1e-3, absl::StrCat("norm p=", p, " ", what));
          }
        }
      }
    }
  }
}

TEST_F(ReduceTest, MaxMinArgmaxArgminIncludingTies) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kU8}) {
    // Few distinct values, so ties are common: the first occurrence must win.
    const Tensor x = testing::random_tensor(rng(), {5, 8, 6}, dtype, 0, 4, Layout::kTransposed);
    const Ref rx = ref_of(x);
    for (const Shape& dims : kDimSets) {
      const std::string what = absl::StrCat(dtype_name(dtype), " dims ", shape_str(dims));
      Tensor hi = max(x, dims);
      EXPECT_EQ(hi.dtype(), dtype);
      expect_equal(hi, ref_reduce(rx, dims, false, ref_max), "max " + what);
      Tensor lo = min(x, dims, true);
      expect_equal(lo, ref_reduce(rx, dims, true, ref_min), "min " + what);
    }
    for (int64_t dim : {0, 1, 2, -1}) {
      Tensor am = argmax(x, dim);
      EXPECT_EQ(am.dtype(), DType::kI64);
      expect_equal(am, ref_reduce(rx, {dim}, false, ref_argmax), absl::StrCat("argmax dim ", dim));
      Tensor an = argmin(x, dim, true);
      expect_equal(an, ref_reduce(rx, {dim}, true, ref_argmin), absl::StrCat("argmin dim ", dim));
    }
    Tensor flat = argmax(x);
    EXPECT_EQ(flat.dim(), 0);
    expect_equal(flat, ref_reduce(rx, {}, false, ref_argmax), "argmax flat");
  }
}

TEST_F(ReduceTest, NanWinsMaxAndArgmax) {
  Tensor x = from_vector<float>({1.f, NAN, 5.f, NAN}, {4});
  Tensor m = max(x);
  float mv = item<float>(m);
  EXPECT_TRUE(std::isnan(mv));
  Tensor am = argmax(x);
  int64_t index = item<int64_t>(am);
  EXPECT_EQ(index, 1);
}

TEST_F(ReduceTest, IntegerAndBoolSumsGiveI64AndMeanGivesF32) {
  const Tensor x = testing::random_tensor(rng(), {7, 5}, DType::kI32, -100, 100);
  Tensor s = sum(x, {0});
  EXPECT_EQ(s.dtype(), DType::kI64);
  expect_equal(s, ref_reduce(ref_of(x), {0}, false, ref_sum));
  const Tensor b = testing::random_tensor(rng(), {50}, DType::kBool);
  Tensor count = sum(b);
  EXPECT_EQ(count.dtype(), DType::kI64);
  expect_equal(count, ref_reduce(ref_of(b), {}, false, ref_sum));
  Tensor m = mean(b);
  EXPECT_EQ(m.dtype(), DType::kF32);
  expect_close(m, ref_reduce(ref_of(b), {}, false, ref_mean), 1e-6);
}

TEST_F(ReduceTest, LongRowsAndColumnsCrossBlockBoundaries) {
  // A full reduction, a few very long rows, and a long reduced non-inner axis.
  struct Case {
    Shape shape;
    Shape dims;
  };
  for (const Case& c :
       {Case{{(1 << 20) + 7}, {}}, Case{{3, 300001}, {1}}, Case{{300001, 3}, {0}}, Case{{5, 4099, 3}, {1}}}) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      // f16 sums of a million values must stay below its largest finite value.
      const Tensor x = testing::random_tensor(rng(), c.shape, dtype, 0, dtype == DType::kF16 ? 0.05 : 1);
      const Ref rx = ref_of(x);
      const std::string what = absl::StrCat(dtype_name(dtype), shape_str(c.shape), " dims ", shape_str(c.dims));
      Tensor s = sum(x, c.dims);
      expect_close(s, ref_reduce(rx, c.dims, false, ref_sum), tolerance(dtype), 1e-3, "sum " + what);
      Tensor hi = max(x, c.dims);
      expect_equal(hi, ref_reduce(rx, c.dims, false, ref_max), "max " + what);
      if (c.dims.size() == 1) {
        Tensor am = argmax(x, c.dims[0]);
        expect_equal(am, ref_reduce(rx, c.dims, false, ref_argmax), "argmax " + what);
      }
      Tensor v = var(x, c.dims);
      expect_close(v, ref_reduce(rx, c.dims, false, [](const std::vector<double>& g) { return ref_var(g, 1); }),
                   tolerance(dtype), 1e-3, "var " + what);
    }
  }
}

TEST_F(ReduceTest, LongRowsSumTheSameOnAnyNumberOfThreads) {
  TS_SKIP_WIDE_OPENMP_TEAMS_UNDER_TSAN();
  // Long rows are cut into parts at fixed boundaries whatever the thread
  // count, so an f64 reference gives the same bits on 1 thread (a loader
  // worker) and on several.
  const Tensor x = testing::random_tensor(rng(), {3, 100003}, DType::kF64);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<double> one = to_vector<double>(sum(x, {1}));
  const std::vector<double> whole_one = to_vector<double>(sum(x.select(0, 0)));
  omp_set_num_threads(4);
  const std::vector<double> four = to_vector<double>(sum(x, {1}));
  const std::vector<double> whole_four = to_vector<double>(sum(x.select(0, 0)));
  omp_set_num_threads(threads);
  EXPECT_EQ(one, four);
  EXPECT_EQ(whole_one, whole_four);
  EXPECT_EQ(whole_one[0], one[0]);
}

TEST_F(ReduceTest, EmptyReductions) {
  Tensor x = zeros({0, 3});
  Tensor s = sum(x, {0});
  expect_equal(s, Ref{{3}, {0, 0, 0}});
  Tensor m = mean(x, {0});
  expect_close(m, Ref{{3}, {NAN, NAN, NAN}}, 0);
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"max", "size zero"}, [&] { max(x, {0}); });
  // A norm of nothing is 0, as in PyTorch (the inf-norm too: a max of
  // absolute values starts at 0); gradient clipping meets an empty
  // parameter's gradient this way.
  for (const double p : {1.0, 2.0, 3.0, static_cast<double>(INFINITY)}) {
    SCOPED_TRACE(p);
    expect_equal(norm(x, p, {0}), Ref{{3}, {0, 0, 0}});
    expect_equal(norm(zeros({0}, {DType::kF16}), p), Ref{{}, {0}});
  }
  // Reducing a dim of size 3 of an empty tensor gives an empty result.
  Tensor e = max(x, {1});
  EXPECT_EQ(e.shape(), (Shape{0}));
}

// The variance of values holding an infinity is NaN, as in PyTorch,
// wherever the infinity sits: Welford's running moments gave inf when it
// came last in the combining order, NaN otherwise.
TEST_F(ReduceTest, VarianceWithAnInfinityIsNan) {
  for (const int64_t n : {2, 3, 8, 9, 17, 40000}) {
    for (const int64_t at : {int64_t{0}, n / 2, n - 1}) {
      for (const double inf : {INFINITY, -INFINITY}) {
        SCOPED_TRACE(::testing::Message() << "n " << n << ", inf at " << at << ", " << inf);
        std::vector<double> v(n);
        for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 7);
        v[at] = inf;
        const Tensor row = from_vector<double>(v, {n});
        EXPECT_TRUE(std::isnan(item<double>(var(row)))) << "a row";
        // The same values down a column of [n, 3] (the column path).
        const Tensor columns = contiguous(row.unsqueeze(1).expand({n, 3}));
        for (const double c : to_vector<double>(var(columns, {0}))) EXPECT_TRUE(std::isnan(c)) << "a column";
        for (const double c : to_vector<double>(var(to(columns, DType::kF32), {0}))) EXPECT_TRUE(std::isnan(c));
      }
    }
  }
}

TEST_F(ReduceTest, ScalarTensorReducesToItself) {
  Tensor x = full({}, 2.5);
  Tensor s = sum(x);
  EXPECT_EQ(s.dim(), 0);
  float v = item<float>(s);
  EXPECT_EQ(v, 2.5f);
}

TEST_F(ReduceTest, BadDimsAreErrors) {
  Tensor x = zeros({2, 3});
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"sum", "dim 2", "2 dims"}, [&] { sum(x, {2}); });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"mean", "more than once"}, [&] { mean(x, {1, -1}); });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"norm", "positive"}, [&] { norm(x, -1); });
}

TEST_F(ReduceTest, SoftmaxAndLogSoftmaxAlongEveryDim) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    // Large logits: only a max-subtracting kernel stays finite.
    for (double scale : {3.0, 200.0}) {
      const Tensor x = testing::random_tensor(rng(), {4, 33, 5}, dtype, -scale, scale, Layout::kTransposed);
      for (int64_t dim : {0, 1, 2, -1}) {
        const std::string what = absl::StrCat(dtype_name(dtype), " scale ", scale, " dim ", dim);
        Tensor p = softmax(x, dim);
        expect_close(p, ref_softmax(ref_of(x), dim, false), tolerance(dtype), 1e-3, "softmax " + what);
        Tensor lp = log_softmax(x, dim);
        expect_close(lp, ref_softmax(ref_of(x), dim, true), tolerance(dtype), 1, "log_softmax " + what);
      }
    }
  }
  // A long row.
  const Tensor wide = testing::random_tensor(rng(), {3, 33000}, DType::kF32, -5, 5);
  Tensor p = softmax(wide, 1);
  expect_close(p, ref_softmax(ref_of(wide), 1, false), tolerance(DType::kF32), 1e-6, "wide softmax");
}

}  // namespace
}  // namespace ts
