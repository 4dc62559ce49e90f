// Elementwise ops against float64 references: every unary and binary op in
// every dtype it accepts, on contiguous and non-contiguous inputs, with
// broadcasting corners, empty tensors and sizes past any block boundary.
#include <cmath>

#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::expect_close;
using testing::expect_equal;
using testing::Layout;
using testing::Ref;
using testing::ref_of;
using testing::ref_round;
using testing::tolerance;

constexpr DType kFloatTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
constexpr Layout kLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kStrided};

struct UnaryCase {
  const char* name;
  absl::StatusOr<Tensor> (*op)(const Tensor&);
  double (*ref)(double);
  double lo, hi;
  bool integer_ok;  // also defined on integer inputs (same dtype out)
};

double sign_ref(double x) { return std::isnan(x) ? x : (x > 0) - (x < 0); }
double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

const UnaryCase kUnaryCases[] = {
    {"neg", neg, [](double x) { return -x; }, -3, 3, true},
    {"abs", abs, [](double x) { return std::abs(x); }, -3, 3, true},
    {"sign", sign, sign_ref, -3, 3, true},
    {"square", square, [](double x) { return x * x; }, -3, 3, true},
    {"relu", relu, [](double x) { return x < 0 ? 0 : x; }, -3, 3, true},
    {"reciprocal", reciprocal, [](double x) { return 1 / x; }, 0.25, 4, false},
    {"exp", exp, [](double x) { return std::exp(x); }, -5, 5, false},
    {"log", log, [](double x) { return std::log(x); }, 0.05, 20, false},
    {"log1p", log1p, [](double x) { return std::log1p(x); }, -0.9, 5, false},
    {"expm1", expm1, [](double x) { return std::expm1(x); }, -3, 3, false},
    {"sqrt", sqrt, [](double x) { return std::sqrt(x); }, 0.01, 20, false},
    {"rsqrt", rsqrt, [](double x) { return 1 / std::sqrt(x); }, 0.01, 20, false},
    {"sin", sin, [](double x) { return std::sin(x); }, -3, 3, false},
    {"cos", cos, [](double x) { return std::cos(x); }, -3, 3, false},
    {"tanh", tanh, [](double x) { return std::tanh(x); }, -4, 4, false},
    {"sigmoid", sigmoid, sigmoid_ref, -8, 8, false},
    {"gelu", gelu, gelu_ref, -4, 4, false},
    {"erf", erf, [](double x) { return std::erf(x); }, -3, 3, false},
    {"floor", floor, [](double x) { return std::floor(x); }, -5, 5, false},
    {"ceil", ceil, [](double x) { return std::ceil(x); }, -5, 5, false},
    {"round", round, [](double x) { return std::nearbyint(x); }, -5, 5, false},
};

class ElementwiseTest : public testing::SeededTest {};

TEST_F(ElementwiseTest, UnaryOpsMatchReferenceInEveryFloatTypeAndLayout) {
  for (const UnaryCase& c : kUnaryCases) {
    for (DType dtype : kFloatTypes) {
      for (Layout layout : kLayouts) {
        const Tensor x = testing::random_tensor(rng(), {9, 37}, dtype, c.lo, c.hi, layout);
        ASSERT_OK_AND_ASSIGN(Tensor y, c.op(x));
        EXPECT_EQ(y.dtype(), dtype);
        // The input's rounding to dtype is part of the input; the op's error
        // is what the tolerance bounds.
        expect_close(y, testing::ref_map(ref_of(x), c.ref), tolerance(dtype), 1e-3,
                     absl::StrCat(c.name, " ", dtype_name(dtype), " layout ", static_cast<int>(layout)));
      }
    }
  }
}

TEST_F(ElementwiseTest, UnaryOpsOnIntegers) {
  for (const UnaryCase& c : kUnaryCases) {
    for (DType dtype : {DType::kI32, DType::kI64}) {
      const Tensor x = testing::random_tensor(rng(), {5, 11}, dtype, c.integer_ok ? -50 : 1, 20);
      ASSERT_OK_AND_ASSIGN(Tensor y, c.op(x));
      if (c.integer_ok) {
        EXPECT_EQ(y.dtype(), dtype) << c.name;
        expect_equal(y, testing::ref_map(ref_of(x), c.ref), c.name);
      } else {
        // Real-valued functions of integers are computed in f32.
        EXPECT_EQ(y.dtype(), DType::kF32) << c.name;
        expect_close(y, testing::ref_map(ref_of(x), c.ref), tolerance(DType::kF32), 1e-3, c.name);
      }
    }
  }
}

TEST_F(ElementwiseTest, LogicalNotAndIsNanGiveBool) {
  ASSERT_OK_AND_ASSIGN(Tensor x, from_vector<float>({0.f, 1.f, -2.f, NAN}, {4}));
  ASSERT_OK_AND_ASSIGN(Tensor n, logical_not(x));
  EXPECT_EQ(n.dtype(), DType::kBool);
  expect_equal(n, Ref{{4}, {1, 0, 0, 0}});
  ASSERT_OK_AND_ASSIGN(Tensor nan, isnan(x));
  expect_equal(nan, Ref{{4}, {0, 0, 0, 1}});
}

TEST_F(ElementwiseTest, UnaryOnBoolIsAnError) {
  ASSERT_OK_AND_ASSIGN(Tensor b, zeros({3}, {DType::kBool}));
  testing::expect_error(neg(b).status(), absl::StatusCode::kInvalidArgument, {"neg", "bool"});
}

struct BinaryCase {
  const char* name;
  absl::StatusOr<Tensor> (*op)(const Tensor&, const Tensor&);
  double (*ref)(double, double);
  double lo, hi;       // operand range
  bool float_only;     // integers are computed in f32
  bool returns_bool;
};

double max_ref(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double min_ref(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

const BinaryCase kBinaryCases[] = {
    {"add", add, [](double a, double b) { return a + b; }, -4, 4, false, false},
    {"sub", sub, [](double a, double b) { return a - b; }, -4, 4, false, false},
    {"mul", mul, [](double a, double b) { return a * b; }, -4, 4, false, false},
    {"div", div, [](double a, double b) { return a / b; }, 0.25, 4, true, false},
    {"pow", pow, [](double a, double b) { return std::pow(a, b); }, 0.25, 2.5, true, false},
    {"maximum", maximum, max_ref, -4, 4, false, false},
    {"minimum", minimum, min_ref, -4, 4, false, false},
    {"eq", eq, [](double a, double b) -> double { return a == b; }, -2, 2, false, true},
    {"ne", ne, [](double a, double b) -> double { return a != b; }, -2, 2, false, true},
    {"lt", lt, [](double a, double b) -> double { return a < b; }, -2, 2, false, true},
    {"le", le, [](double a, double b) -> double { return a <= b; }, -2, 2, false, true},
    {"gt", gt, [](double a, double b) -> double { return a > b; }, -2, 2, false, true},
    {"ge", ge, [](double a, double b) -> double { return a >= b; }, -2, 2, false, true},
    {"logical_and", logical_and, [](double a, double b) -> double { return a != 0 && b != 0; }, -1, 2, false, true},
    {"logical_or", logical_or, [](double a, double b) -> double { return a != 0 || b != 0; }, -1, 2, false, true},
};

// Shape pairs covering broadcasting corners, empty tensors and a size that
// crosses every block and vector-width boundary.
const std::pair<Shape, Shape> kShapePairs[] = {
    {{6, 13}, {6, 13}}, {{6, 1}, {1, 13}}, {{13}, {3, 6, 13}}, {{}, {4, 3}},
    {{4, 3}, {}},       {{1}, {7}},        {{2, 0, 3}, {1, 3}}, {{(1 << 18) + 3}, {(1 << 18) + 3}},
};

void check_binary(const BinaryCase& c, const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_OK_AND_ASSIGN(Tensor y, c.op(a, b));
  const DType compute = c.float_only ? to_floating(promote_types(a.dtype(), b.dtype()))
                                     : promote_types(a.dtype(), b.dtype());
  EXPECT_EQ(y.dtype(), c.returns_bool ? DType::kBool : compute) << what;
  const Ref expected = testing::ref_zip(ref_of(a), ref_of(b), c.ref);
  if (c.returns_bool || is_integral(compute)) {
    expect_equal(y, expected, what);
  } else {
    expect_close(y, expected, tolerance(compute), 1e-3, what);
  }
}

TEST_F(ElementwiseTest, BinaryOpsMatchReferenceWithBroadcasting) {
  for (const BinaryCase& c : kBinaryCases) {
    for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64}) {
      for (const auto& [sa, sb] : kShapePairs) {
        // Integer operands in the case's range, as whole numbers; pow's
        // exponent stays small so integer results fit.
        const Tensor a = testing::random_tensor(rng(), sa, dtype, c.lo, c.hi);
        const Tensor b = testing::random_tensor(rng(), sb, dtype, c.lo, c.hi);
        check_binary(c, a, b, absl::StrCat(c.name, " ", dtype_name(dtype), " ", shape_str(sa), "x", shape_str(sb)));
      }
    }
  }
}

TEST_F(ElementwiseTest, BinaryOpsOnNonContiguousViews) {
  for (const BinaryCase& c : kBinaryCases) {
    for (Layout la : kLayouts) {
      for (Layout lb : kLayouts) {
        const Tensor a = testing::random_tensor(rng(), {17, 9}, DType::kF32, c.lo, c.hi, la);
        const Tensor b = testing::random_tensor(rng(), {17, 9}, DType::kF32, c.lo, c.hi, lb);
        check_binary(c, a, b, absl::StrCat(c.name, " layouts ", static_cast<int>(la), ",", static_cast<int>(lb)));
      }
    }
    // An expanded (stride 0) operand.
    const Tensor row = testing::random_tensor(rng(), {1, 9}, DType::kF32, c.lo, c.hi);
    ASSERT_OK_AND_ASSIGN(Tensor expanded, row.expand({17, 9}));
    const Tensor other = testing::random_tensor(rng(), {17, 9}, DType::kF32, c.lo, c.hi, Layout::kTransposed);
    check_binary(c, expanded, other, absl::StrCat(c.name, " expanded"));
  }
}

TEST_F(ElementwiseTest, U8ArithmeticStaysU8) {
  const Tensor a = testing::random_tensor(rng(), {40}, DType::kU8, 0, 15);
  const Tensor b = testing::random_tensor(rng(), {40}, DType::kU8, 0, 15);
  ASSERT_OK_AND_ASSIGN(Tensor s, add(a, b));
  EXPECT_EQ(s.dtype(), DType::kU8);
  expect_equal(s, testing::ref_zip(ref_of(a), ref_of(b), [](double x, double y) { return x + y; }));
  ASSERT_OK_AND_ASSIGN(Tensor p, mul(a, b));
  expect_equal(p, testing::ref_zip(ref_of(a), ref_of(b), [](double x, double y) { return x * y; }));
}

TEST_F(ElementwiseTest, TypePromotion) {
  auto t = [](DType d) { return testing::value_or_die(ones({2}, {d})); };
  auto result = [](absl::StatusOr<Tensor> r) { return testing::value_or_die(std::move(r)).dtype(); };
  EXPECT_EQ(result(add(t(DType::kI32), t(DType::kF16))), DType::kF16);
  EXPECT_EQ(result(add(t(DType::kU8), t(DType::kI32))), DType::kI32);
  EXPECT_EQ(result(add(t(DType::kF16), t(DType::kBF16))), DType::kF32);
  EXPECT_EQ(result(add(t(DType::kF32), t(DType::kF64))), DType::kF64);
  EXPECT_EQ(result(add(t(DType::kI64), t(DType::kBool))), DType::kI64);
  // A scalar only widens across categories.
  EXPECT_EQ(result(add(t(DType::kF16), 2.5)), DType::kF16);
  EXPECT_EQ(result(add(t(DType::kI32), 2.5)), DType::kF32);
  EXPECT_EQ(result(add(t(DType::kI32), 7)), DType::kI32);
  EXPECT_EQ(result(add(t(DType::kU8), 7)), DType::kU8);
  EXPECT_EQ(result(add(t(DType::kBool), 1)), DType::kI64);
  EXPECT_EQ(result(div(t(DType::kI64), t(DType::kI64))), DType::kF32);
  EXPECT_EQ(result(lt(t(DType::kF16), 1)), DType::kBool);
  testing::expect_error(add(t(DType::kBool), t(DType::kBool)).status(), absl::StatusCode::kInvalidArgument,
                        {"add", "bool"});
}

TEST_F(ElementwiseTest, ScalarOperandsOnEitherSide) {
  const Tensor x = testing::random_tensor(rng(), {4, 6}, DType::kF32, 0.5, 3, Layout::kTransposed);
  const Ref rx = ref_of(x);
  const double s = 1.75;
  auto check = [&](absl::StatusOr<Tensor> got, double (*f)(double, double), bool scalar_first, const char* what) {
    ASSERT_TRUE(got.ok()) << got.status();
    const Ref want = testing::ref_map(rx, [&](double v) { return scalar_first ? f(s, v) : f(v, s); });
    // The scalar enters in f32, as the kernel sees it.
    expect_close(*got, want, tolerance(DType::kF32), 1e-3, what);
  };
  check(add(x, s), [](double a, double b) { return a + b; }, false, "x + s");
  check(sub(x, s), [](double a, double b) { return a - b; }, false, "x - s");
  check(sub(s, x), [](double a, double b) { return a - b; }, true, "s - x");
  check(mul(x, s), [](double a, double b) { return a * b; }, false, "x * s");
  check(div(x, s), [](double a, double b) { return a / b; }, false, "x / s");
  check(div(s, x), [](double a, double b) { return a / b; }, true, "s / x");
  check(pow(x, s), [](double a, double b) { return std::pow(a, b); }, false, "x ^ s");
  ASSERT_OK_AND_ASSIGN(Tensor cmp, ge(x, 1.5));
  expect_equal(cmp, testing::ref_map(rx, [](double v) -> double { return v >= 1.5; }));
}

TEST_F(ElementwiseTest, NanPropagatesThroughMaximumAndMinimum) {
  ASSERT_OK_AND_ASSIGN(Tensor a, from_vector<float>({1.f, NAN, 3.f}, {3}));
  ASSERT_OK_AND_ASSIGN(Tensor b, from_vector<float>({NAN, 2.f, 1.f}, {3}));
  ASSERT_OK_AND_ASSIGN(Tensor hi, maximum(a, b));
  expect_close(hi, Ref{{3}, {NAN, NAN, 3}}, 0);
  ASSERT_OK_AND_ASSIGN(Tensor lo, minimum(a, b));
  expect_close(lo, Ref{{3}, {NAN, NAN, 1}}, 0);
}

TEST_F(ElementwiseTest, WhereBroadcastsAllThreeAndPromotes) {
  const Tensor cond = testing::random_tensor(rng(), {5, 1, 4}, DType::kBool);
  const Tensor a = testing::random_tensor(rng(), {3, 4}, DType::kF32, -3, 3, Layout::kTransposed);
  const Tensor b = testing::random_tensor(rng(), {1, 3, 1}, DType::kI32, -5, 5);
  ASSERT_OK_AND_ASSIGN(Tensor y, where(cond, a, b));
  EXPECT_EQ(y.dtype(), DType::kF32);
  const Shape shape = {5, 3, 4};
  const Ref c = testing::ref_expand(ref_of(cond), shape);
  const Ref ra = testing::ref_expand(ref_of(a), shape);
  const Ref rb = testing::ref_expand(ref_of(b), shape);
  Ref want = c;
  for (int64_t i = 0; i < want.numel(); ++i) want.v[i] = c.v[i] != 0 ? ra.v[i] : rb.v[i];
  expect_equal(y, want);

  ASSERT_OK_AND_ASSIGN(Tensor ys, where(cond, a, 0.5));
  ASSERT_OK_AND_ASSIGN(Tensor ys2, where(cond, -1, b));
  EXPECT_EQ(ys.shape(), (Shape{5, 3, 4}));
  EXPECT_EQ(ys2.dtype(), DType::kI32);
  testing::expect_error(where(a, a, a).status(), absl::StatusCode::kInvalidArgument, {"where", "bool"});
}

TEST_F(ElementwiseTest, MaskedFillKeepsDtypeAndShape) {
  const Tensor x = testing::random_tensor(rng(), {4, 5}, DType::kI64, -9, 9);
  const Tensor mask = testing::random_tensor(rng(), {5}, DType::kBool);
  ASSERT_OK_AND_ASSIGN(Tensor y, masked_fill(x, mask, 2.9));
  EXPECT_EQ(y.dtype(), DType::kI64);
  expect_equal(y, testing::ref_zip(ref_of(x), ref_of(mask), [](double v, double m) { return m != 0 ? 2 : v; }));
  const Tensor big_mask = testing::random_tensor(rng(), {3, 4, 5}, DType::kBool);
  testing::expect_error(masked_fill(x, big_mask, 0).status(), absl::StatusCode::kInvalidArgument,
                        {"masked_fill", "[3, 4, 5]"});
}

TEST_F(ElementwiseTest, ClampBoundsAndKeepsNan) {
  ASSERT_OK_AND_ASSIGN(Tensor x, from_vector<float>({-3.f, -0.5f, 0.f, 0.7f, 9.f, NAN}, {6}));
  ASSERT_OK_AND_ASSIGN(Tensor both, clamp(x, -1, 1));
  expect_close(both, Ref{{6}, {-1, -0.5, 0, 0.7, 1, NAN}}, 1e-7);
  ASSERT_OK_AND_ASSIGN(Tensor lower, clamp(x, 0, std::nullopt));
  expect_close(lower, Ref{{6}, {0, 0, 0, 0.7, 9, NAN}}, 1e-7);
  testing::expect_error(clamp(x, 2, 1).status(), absl::StatusCode::kInvalidArgument, {"clamp", "min 2"});
}

}  // namespace
}  // namespace ts
