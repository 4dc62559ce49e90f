// gradcheck of the differentiable ops in autograd/ops.h that the OpInfo table
// (tests/op_info, which checks every elementwise op, reduction, softmax and
// matmul) does not describe: shape ops on strided views, indexing with
// repeated indices, casts, a negative base to an integer power, the
// arithmetic operators with a scalar on either side, and gradcheck's own
// verdict on a wrong backward.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::autograd {
namespace {

using ::ts::testing::random_tensor;
using Vars = std::vector<Variable>;

class OpsGradcheckTest : public ts::testing::SeededTest {
 protected:
  Tensor input(Dims shape, double lo = -1, double hi = 1) { return random_tensor(rng(), shape, DType::kF64, lo, hi); }
  void check(const std::string& what, const GradcheckFn& fn, const std::vector<Tensor>& inputs) {
    SCOPED_TRACE(what);
    EXPECT_OK(gradcheck(fn, inputs));
  }
};

// The table draws pow's base from positive values (its gradient in the
// exponent takes log(base)); an integer exponent also takes negative bases.
TEST_F(OpsGradcheckTest, PowOfNegativeBasesToAnIntegerExponent) {
  check("pow 3", [](const Vars& v) { return pow(v[0], 3); }, {input({5})});
}

// The operators' scalar operand on the left and on the right: the values of
// the math, and gradients only for the variable.
TEST_F(OpsGradcheckTest, ScalarOperandsOnEitherSide) {
  const Tensor x = input({4}, 0.5, 2);
  const Variable v(x);
  const std::vector<double> xs = to_vector<double>(x);
  const std::vector<std::pair<Variable, std::function<double(double)>>> cases = {
      {1.5 + v, [](double a) { return 1.5 + a; }}, {v + 1.5, [](double a) { return a + 1.5; }},
      {2.0 - v, [](double a) { return 2.0 - a; }}, {v - 2.0, [](double a) { return a - 2.0; }},
      {3.0 * v, [](double a) { return 3.0 * a; }}, {v * 3.0, [](double a) { return a * 3.0; }},
      {3.0 / v, [](double a) { return 3.0 / a; }}, {v / 3.0, [](double a) { return a / 3.0; }},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const std::vector<double> got = to_vector<double>(cases[c].first.data());
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], cases[c].second(xs[i])) << "case " << c;
  }
  check("scalar + x", [](const Vars& v) { return 1.5 + v[0]; }, {x});
  check("scalar - x", [](const Vars& v) { return 2.0 - v[0]; }, {x});
  check("x - scalar", [](const Vars& v) { return v[0] - 2.0; }, {x});
  check("scalar * x", [](const Vars& v) { return 3.0 * v[0]; }, {x});
  check("scalar / x", [](const Vars& v) { return 3.0 / v[0]; }, {x});
  check("x / scalar", [](const Vars& v) { return v[0] / 3.0; }, {x});
}

TEST_F(OpsGradcheckTest, ShapeOps) {
  const Tensor x = input({2, 3, 4});
  check("reshape", [](const Vars& v) { return reshape(v[0], {6, -1}); }, {x});
  check("flatten", [](const Vars& v) { return flatten(v[0], 1); }, {x});
  check("transpose", [](const Vars& v) { return transpose(v[0], 0, 2); }, {x});
  check("permute", [](const Vars& v) { return permute(v[0], {2, 0, 1}); }, {x});
  check("slice step", [](const Vars& v) { return slice(v[0], 2, 0, 4, 3); }, {x});
  check("slice negative", [](const Vars& v) { return slice(v[0], 1, -2, 3); }, {x});
  check("narrow", [](const Vars& v) { return narrow(v[0], 1, 1, 2); }, {x});
  check("select", [](const Vars& v) { return select(v[0], 0, 1); }, {x});
  check("expand", [](const Vars& v) { return expand(v[0], {3, 2, 3}); }, {input({2, 1})});
  check("squeeze", [](const Vars& v) { return squeeze(v[0], 1); }, {input({2, 1, 3})});
  check("unsqueeze", [](const Vars& v) { return unsqueeze(v[0], -1); }, {x});
  check("contiguous of a transpose", [](const Vars& v) { return contiguous(transpose(v[0], 0, 1)); }, {x});
  check("cat", [](const Vars& v) { return cat(v, 1); }, {input({2, 1}), input({2, 3}), input({2, 2})});
  check("stack", [](const Vars& v) { return stack(v, -1); }, {input({2, 3}), input({2, 3})});
}

TEST_F(OpsGradcheckTest, Indexing) {
  const Tensor index = from_vector<int64_t>({2, 0, 2, 1}, {4});  // 2 repeats
  check("index_select dim 0", [&index](const Vars& v) { return index_select(v[0], 0, index); }, {input({3, 2})});
  check("index_select dim 1", [&index](const Vars& v) { return index_select(v[0], 1, index); }, {input({2, 3})});
  const Tensor gather_index = from_vector<int64_t>({0, 0, 2, 1, 1, 1}, {2, 3});
  check("gather", [&gather_index](const Vars& v) { return gather(v[0], 1, gather_index); }, {input({2, 4})});
}

TEST_F(OpsGradcheckTest, CastGradientReturnsInTheInputDtype) {
  Variable x(ones({3}), true);
  Variable s = sum(mul(to(x, DType::kF64), 2.0));
  s.backward();
  EXPECT_EQ(x.grad().dtype(), DType::kF32);
  EXPECT_EQ(to_vector<float>(x.grad()), (std::vector<float>{2, 2, 2}));
}

// As in PyTorch, an integer result is a constant to backward: no gradient
// flows through the cast back to x (it did, as if the cast were the
// identity), and only w, which multiplies it, gets one.
TEST_F(OpsGradcheckTest, ACastToAnIntegerEndsTheGraph) {
  Variable x(from_vector<float>({0.3f, 1.7f}, {2}), true);
  Variable w(from_vector<float>({5.f, 5.f}, {2}), true);
  const Variable truncated = to(x, DType::kI64);
  EXPECT_FALSE(truncated.requires_grad());
  Variable s = sum(mul(to(truncated, DType::kF32), w));
  s.backward();
  EXPECT_FALSE(x.grad().defined());
  EXPECT_EQ(to_vector<float>(w.grad()), (std::vector<float>{0, 1}));
}

// The mean's backward divides by the count as a scalar, taken in f32 for a
// 16-bit gradient: rounded to f16 first, 70000 was inf and every gradient 0.
TEST_F(OpsGradcheckTest, MeanOfMoreElementsThanF16CanCountHasAGradient) {
  Variable x(zeros({70000}, {DType::kF16}), true);
  mean(x).backward();
  const double expected = static_cast<double>(static_cast<float>(Half(1.0f / 70000.0f)));
  ASSERT_GT(expected, 0);
  for (const float g : to_vector<float>(to(x.grad(), DType::kF32))) ASSERT_EQ(g, expected);
}

TEST_F(OpsGradcheckTest, DeviceCopyGradientReturnsToTheInputDevice) {
  TS_SKIP_WITHOUT_CUDA();
  Variable x(ones({3}), true);
  Variable s = sum(mul(to(x, Device::cuda(0)), 3.0));
  s.backward();
  EXPECT_TRUE(x.grad().device().is_cpu());
  EXPECT_EQ(to_vector<float>(x.grad()), (std::vector<float>{3, 3, 3}));
}

TEST_F(OpsGradcheckTest, GradcheckCatchesAWrongBackward) {
  // A deliberately wrong formula: the value of square with the gradient of x.
  const GradcheckFn wrong = [](const Vars& v) { return add(sub(square(v[0]).detach(), v[0].detach()), v[0]); };
  ts::testing::expect_error(gradcheck(wrong, {input({3})}), absl::StatusCode::kInternal,
                            {"gradcheck", "input 0", "central differences"});
}

}  // namespace
}  // namespace ts::autograd
