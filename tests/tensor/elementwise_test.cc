// What the OpInfo table (tests/op_info: every elementwise op against float64
// in every dtype, layout and broadcasting shape) does not express: type
// promotion, u8 arithmetic, the arithmetic operators, NaN and bool special
// cases, float-to-integer conversion out of range, where/masked_fill/clamp
// corners, and the errors of misuse.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::expect_close;
using testing::expect_equal;
using testing::Layout;
using testing::Ref;
using testing::ref_of;

class ElementwiseTest : public testing::SeededTest {};

TEST_F(ElementwiseTest, LogicalNotAndIsNanGiveBool) {
  Tensor x = from_vector<float>({0.f, 1.f, -2.f, NAN}, {4});
  Tensor n = logical_not(x);
  EXPECT_EQ(n.dtype(), DType::kBool);
  expect_equal(n, Ref{{4}, {1, 0, 0, 0}});
  Tensor nan = isnan(x);
  expect_equal(nan, Ref{{4}, {0, 0, 0, 1}});
}

TEST_F(ElementwiseTest, UnaryOnBoolIsAnError) {
  Tensor b = zeros({3}, {DType::kBool});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"neg", "bool"}, [&] { neg(b); });
}

TEST_F(ElementwiseTest, U8ArithmeticStaysU8) {
  const Tensor a = testing::random_tensor(rng(), {40}, DType::kU8, 0, 15);
  const Tensor b = testing::random_tensor(rng(), {40}, DType::kU8, 0, 15);
  Tensor s = add(a, b);
  EXPECT_EQ(s.dtype(), DType::kU8);
  expect_equal(s, testing::ref_zip(ref_of(a), ref_of(b), [](double x, double y) { return x + y; }));
  Tensor p = mul(a, b);
  expect_equal(p, testing::ref_zip(ref_of(a), ref_of(b), [](double x, double y) { return x * y; }));
}

TEST_F(ElementwiseTest, FloatToIntegerGoesTowardZeroClampsAndTakesNanToZero) {
  // As CUDA converts (tensor/float_to_int.h); C++ leaves the out-of-range
  // and NaN cases undefined, and x86 would give the lowest value.
  const Tensor x =
      from_vector<float>({2.7f, -2.7f, 300, -1, 3e9f, -3e9f, 1e20f, -1e20f, INFINITY, -INFINITY, NAN}, {11});
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::lowest(), kMax32 = std::numeric_limits<int32_t>::max();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::lowest(), kMax64 = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(to_vector<int32_t>(to(x, DType::kI32)),
            (std::vector<int32_t>{2, -2, 300, -1, kMax32, kMin32, kMax32, kMin32, kMax32, kMin32, 0}));
  EXPECT_EQ(to_vector<int64_t>(to(x, DType::kI64)),
            (std::vector<int64_t>{2, -2, 300, -1, 3000000000, -3000000000, kMax64, kMin64, kMax64, kMin64, 0}));
  EXPECT_EQ(to_vector<uint8_t>(to(x, DType::kU8)), (std::vector<uint8_t>{2, 0, 255, 0, 255, 0, 255, 0, 255, 0, 0}));
  // 2^31 and 2^63 themselves are one past the range; the values just below
  // them that f64 holds are in it.
  const Tensor edges = from_vector<double>({2147483648.0, 2147483647.0, -2147483648.0, -2147483649.0}, {4});
  EXPECT_EQ(to_vector<int32_t>(to(edges, DType::kI32)), (std::vector<int32_t>{kMax32, kMax32, kMin32, kMin32}));
  const Tensor edges64 = from_vector<double>({9223372036854775808.0, 9223372036854774784.0}, {2});
  EXPECT_EQ(to_vector<int64_t>(to(edges64, DType::kI64)), (std::vector<int64_t>{kMax64, 9223372036854774784}));
  // The 16-bit floats convert through the same rule (f16's range ends at
  // 65504, so 1e20 is already infinite there).
  EXPECT_EQ(to_vector<int32_t>(to(to(x, DType::kF16), DType::kI32)),
            (std::vector<int32_t>{2, -2, 300, -1, kMax32, kMin32, kMax32, kMin32, kMax32, kMin32, 0}));
}

// A scalar with a 16-bit float tensor is taken in f32, as PyTorch's op math
// takes it, and only the result is rounded. Rounded first, 65536 and 1e5
// were inf in f16 (x * 65536 gave inf for 0.001 and NaN for 0), 1e-5 a
// subnormal of few bits, and 2049 was 2048.
TEST_F(ElementwiseTest, ScalarsOf16BitOpsAreTakenInF32) {
  for (const DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = to(from_vector<float>({0.001f, 1.f, 1000.f, 0.f, 3.f}, {5}), dtype);
    const auto in_f32 = [&](float scalar, float (*op)(float, float)) {
      return testing::ref_round(
          testing::ref_map(ref_of(x), [&](double v) { return static_cast<double>(op(static_cast<float>(v), scalar)); }),
          dtype);
    };
    expect_equal(mul(x, 65536.0), in_f32(65536.f, [](float a, float b) { return a * b; }), "x * 65536");
    expect_equal(div(x, 1e5), in_f32(1e5f, [](float a, float b) { return a / b; }), "x / 1e5");
    expect_equal(mul(x, 1e-5), in_f32(1e-5f, [](float a, float b) { return a * b; }), "x * 1e-5");
    expect_equal(add(x, 2049), in_f32(2049.f, [](float a, float b) { return a + b; }), "x + 2049");
    expect_equal(sub(65536.0, x), in_f32(65536.f, [](float a, float b) { return b - a; }), "65536 - x");
  }
}

// A comparison sees a scalar as the tensor's dtype holds it, as PyTorch's
// do: f16 0.1 == 0.1 (both 0.0999755859); taken in f32 the scalar was not
// equal to its own rounding, and lt, le, gt, ge flipped with it.
TEST_F(ElementwiseTest, ComparisonsOf16BitTensorsRoundTheScalarToTheirDtype) {
  for (const DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = to(from_vector<double>({0.1, 0.2, 0.3, 1.0 / 3, 2.5}, {5}), dtype);
    for (const double s : {0.1, 0.2, 0.3, 1.0 / 3}) {
      SCOPED_TRACE(s);
      const double held = testing::ref_round(Ref{{}, {s}}, dtype).v[0];
      const auto ref = [&](bool (*op)(double, double)) {
        return testing::ref_map(ref_of(x), [&](double v) { return op(v, held) ? 1.0 : 0.0; });
      };
      expect_equal(eq(x, s), ref([](double a, double b) { return a == b; }), "x == s");
      expect_equal(lt(x, s), ref([](double a, double b) { return a < b; }), "x < s");
      expect_equal(ge(x, s), ref([](double a, double b) { return a >= b; }), "x >= s");
      expect_equal(le(s, x), ref([](double a, double b) { return b <= a; }), "s <= x");
    }
  }
  // f32 and f64 hold the scalar as it is.
  EXPECT_TRUE(item<bool>(eq(full({}, 0.1, {DType::kF32}), 0.1)));
  EXPECT_FALSE(item<bool>(eq(full({}, 0.1, {DType::kF32}), full({}, 0.1, {DType::kF64}))));
}

// floor, ceil and round of an integer tensor are the tensor itself, in its
// own dtype, as in PyTorch; they went through f32, which rounds past 2^24.
TEST_F(ElementwiseTest, FloorCeilRoundKeepIntegers) {
  const std::vector<int64_t> values = {16777217, 123456789, -7, 0, int64_t{1} << 53 | 1};
  for (const DType dtype : {DType::kI64, DType::kI32, DType::kU8}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = dtype == DType::kI64   ? from_vector<int64_t>(values, {5})
                     : dtype == DType::kI32 ? from_vector<int32_t>({16777217, -123456789, 7}, {3})
                                            : from_vector<uint8_t>({0, 7, 255}, {3});
    for (Tensor (*op)(const Tensor&) : {&floor, &ceil, &round}) {
      const Tensor y = op(x);
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(to_vector<int64_t>(to(y, DType::kI64)), to_vector<int64_t>(to(x, DType::kI64)));
    }
  }
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"floor", "bool"},
                         [] { floor(ones({2}, {DType::kBool})); });
}

// ReLU's gradient is PyTorch's threshold_backward: 0 where the output is
// <= 0, the incoming gradient elsewhere, a NaN output included (0 before).
TEST_F(ElementwiseTest, ReluGradientPassesThroughANanOutput) {
  for (const DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor x = to(from_vector<double>({NAN, -1, 0, 2}, {4}), dtype);
    const Tensor g = to(from_vector<double>({5, 5, 5, 5}, {4}), dtype);
    expect_equal(unary_grad(UnaryOp::kRelu, g, x, relu(x)), Ref{{4}, {5, 0, 0, 5}});
  }
}

TEST_F(ElementwiseTest, TypePromotion) {
  auto t = [](DType d) { return ones({2}, {d}); };
  EXPECT_EQ(add(t(DType::kI32), t(DType::kF16)).dtype(), DType::kF16);
  EXPECT_EQ(add(t(DType::kU8), t(DType::kI32)).dtype(), DType::kI32);
  EXPECT_EQ(add(t(DType::kF16), t(DType::kBF16)).dtype(), DType::kF32);
  EXPECT_EQ(add(t(DType::kF32), t(DType::kF64)).dtype(), DType::kF64);
  EXPECT_EQ(add(t(DType::kI64), t(DType::kBool)).dtype(), DType::kI64);
  // A scalar only widens across categories.
  EXPECT_EQ(add(t(DType::kF16), 2.5).dtype(), DType::kF16);
  EXPECT_EQ(add(t(DType::kI32), 2.5).dtype(), DType::kF32);
  EXPECT_EQ(add(t(DType::kI32), 7).dtype(), DType::kI32);
  EXPECT_EQ(add(t(DType::kU8), 7).dtype(), DType::kU8);
  EXPECT_EQ(add(t(DType::kBool), 1).dtype(), DType::kI64);
  EXPECT_EQ(div(t(DType::kI64), t(DType::kI64)).dtype(), DType::kF32);
  EXPECT_EQ(lt(t(DType::kF16), 1).dtype(), DType::kBool);
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"add", "bool"},
                         [&] { add(t(DType::kBool), t(DType::kBool)); });
}

// The operators are the named ops, with a Scalar on either side.
TEST_F(ElementwiseTest, OperatorsAreTheNamedOps) {
  const Tensor a = testing::random_tensor(rng(), {3, 4}, DType::kF32, 0.5, 2, Layout::kTransposed);
  const Tensor b = testing::random_tensor(rng(), {4}, DType::kF32, 0.5, 2);
  expect_equal(a + b, ref_of(add(a, b)), "a + b");
  expect_equal(a - b, ref_of(sub(a, b)), "a - b");
  expect_equal(a * b, ref_of(mul(a, b)), "a * b");
  expect_equal(a / b, ref_of(div(a, b)), "a / b");
  expect_equal(-a, ref_of(neg(a)), "-a");
  expect_equal(a + 1.5, ref_of(add(a, 1.5)), "a + 1.5");
  expect_equal(1.5 - a, ref_of(sub(1.5, a)), "1.5 - a");
  expect_equal(a * 3, ref_of(mul(a, 3)), "a * 3");
  expect_equal(2.0 / a, ref_of(div(2.0, a)), "2 / a");
}

TEST_F(ElementwiseTest, NanPropagatesThroughMaximumAndMinimum) {
  Tensor a = from_vector<float>({1.f, NAN, 3.f}, {3});
  Tensor b = from_vector<float>({NAN, 2.f, 1.f}, {3});
  Tensor hi = maximum(a, b);
  expect_close(hi, Ref{{3}, {NAN, NAN, 3}}, 0);
  Tensor lo = minimum(a, b);
  expect_close(lo, Ref{{3}, {NAN, NAN, 1}}, 0);
}

TEST_F(ElementwiseTest, WhereBroadcastsAllThreeAndPromotes) {
  const Tensor cond = testing::random_tensor(rng(), {5, 1, 4}, DType::kBool);
  const Tensor a = testing::random_tensor(rng(), {3, 4}, DType::kF32, -3, 3, Layout::kTransposed);
  const Tensor b = testing::random_tensor(rng(), {1, 3, 1}, DType::kI32, -5, 5);
  Tensor y = where(cond, a, b);
  EXPECT_EQ(y.dtype(), DType::kF32);
  const Shape shape = {5, 3, 4};
  const Ref c = testing::ref_expand(ref_of(cond), shape);
  const Ref ra = testing::ref_expand(ref_of(a), shape);
  const Ref rb = testing::ref_expand(ref_of(b), shape);
  Ref want = c;
  for (int64_t i = 0; i < want.numel(); ++i) want.v[i] = c.v[i] != 0 ? ra.v[i] : rb.v[i];
  expect_equal(y, want);

  Tensor ys = where(cond, a, 0.5);
  Tensor ys2 = where(cond, -1, b);
  EXPECT_EQ(ys.shape(), (Shape{5, 3, 4}));
  EXPECT_EQ(ys2.dtype(), DType::kI32);
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"where", "bool"}, [&] { where(a, a, a); });
}

TEST_F(ElementwiseTest, MaskedFillKeepsDtypeAndShape) {
  const Tensor x = testing::random_tensor(rng(), {4, 5}, DType::kI64, -9, 9);
  const Tensor mask = testing::random_tensor(rng(), {5}, DType::kBool);
  Tensor y = masked_fill(x, mask, 2.9);
  EXPECT_EQ(y.dtype(), DType::kI64);
  expect_equal(y, testing::ref_zip(ref_of(x), ref_of(mask), [](double v, double m) { return m != 0 ? 2 : v; }));
  const Tensor big_mask = testing::random_tensor(rng(), {3, 4, 5}, DType::kBool);
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"masked_fill", "[3, 4, 5]"},
                         [&] { masked_fill(x, big_mask, 0); });
}

TEST_F(ElementwiseTest, ClampBoundsAndKeepsNan) {
  Tensor x = from_vector<float>({-3.f, -0.5f, 0.f, 0.7f, 9.f, NAN}, {6});
  Tensor both = clamp(x, -1, 1);
  expect_close(both, Ref{{6}, {-1, -0.5, 0, 0.7, 1, NAN}}, 1e-7);
  Tensor lower = clamp(x, 0, std::nullopt);
  expect_close(lower, Ref{{6}, {0, 0, 0, 0.7, 9, NAN}}, 1e-7);
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"clamp", "min 2"}, [&] { clamp(x, 2, 1); });
}

// div's gradient in the denominator as PyTorch takes it, -g * (a / b / b):
// as -g * a / (b * b), b * b underflowed to 0 in f32 (0 / 0 = NaN for a = 0,
// b = 1e-23) or overflowed (-0 for a = 1e30, b = 1e20, not -1e-10).
TEST_F(ElementwiseTest, DivGradientInTheDenominatorAtExtremes) {
  const Tensor a = from_vector<float>({0.f, 1e30f, 3.f}, {3});
  const Tensor b = from_vector<float>({1e-23f, 1e20f, 2.f}, {3});
  const Tensor db = binary_grad(BinaryOp::kDiv, 1, ones({3}), a, b, Tensor());
  expect_close(db, Ref{{3}, {0, -1e-10, -0.75}}, 1e-6, /*floor=*/1e-30);
}

// An integer bound past the dtype's range does not wrap into it (u8 max 256
// had clamped everything to 0): as PyTorch, a bound that cannot bind is
// dropped and one that would move every value out of the range is an error.
TEST_F(ElementwiseTest, ClampIntegerBoundsPastTheRange) {
  const Tensor bytes = from_vector<uint8_t>({5, 200}, {2});
  expect_equal(clamp(bytes, std::nullopt, 256), Ref{{2}, {5, 200}});
  expect_equal(clamp(bytes, -1, std::nullopt), Ref{{2}, {5, 200}});
  expect_equal(clamp(bytes, -1, 100), Ref{{2}, {5, 100}});
  const Tensor unbound = clamp(bytes, -1, 256);
  EXPECT_EQ(unbound.dtype(), DType::kU8);
  expect_equal(unbound, Ref{{2}, {5, 200}});
  EXPECT_NE(unbound.raw_data(), bytes.raw_data()) << "a new tensor, not the input";
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"clamp: max -1 is below the range of u8"},
                         [&] { clamp(bytes, std::nullopt, -1); });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"clamp: min 256 is above the range of u8"},
                         [&] { clamp(bytes, 256, std::nullopt); });
  const Tensor ints = from_vector<int32_t>({-5, 5}, {2});
  expect_equal(clamp(ints, int64_t{-1} << 40, int64_t{1} << 32), Ref{{2}, {-5, 5}});
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"clamp: min 9223372036854775807 exceeds max"},
                         [&] { clamp(to(ints, DType::kI64), kMax, kMax - 1); });
  // A floating bound promotes, as before, and then the other bound, integer
  // or not, is no longer held to the input's range.
  const Tensor promoted = clamp(ints, std::nullopt, 2.5);
  EXPECT_EQ(promoted.dtype(), DType::kF32);
  expect_equal(promoted, Ref{{2}, {-5, 2.5}});
  expect_equal(clamp(bytes, -3.5, -1), Ref{{2}, {-1, -1}});
  expect_equal(clamp(bytes, 300, 300.5), Ref{{2}, {300, 300}});
}

}  // namespace
}  // namespace ts
