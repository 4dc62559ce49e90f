// gradcheck of every differentiable op in autograd/ops.h on fresh random
// float64 inputs, including broadcasting, strided views and repeated indices.
#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "tensor/status_macros.h"
#include "tests/tensor/testing.h"

namespace ts::autograd {
namespace {

using ::ts::testing::random_tensor;
using ::ts::testing::value_or_die;
using Vars = std::vector<Variable>;

class OpsGradcheckTest : public ts::testing::SeededTest {
 protected:
  Tensor input(Dims shape, double lo = -1, double hi = 1) {
    return random_tensor(rng(), shape, DType::kF64, lo, hi);
  }
  Tensor positive(Dims shape) { return input(shape, 0.5, 2); }
  void check(const std::string& what, const GradcheckFn& fn, const std::vector<Tensor>& inputs) {
    SCOPED_TRACE(what);
    EXPECT_OK(gradcheck(fn, inputs));
  }
};

TEST_F(OpsGradcheckTest, BinaryOpsWithBroadcasting) {
  using BinaryFn = std::function<absl::StatusOr<Variable>(const Variable&, const Variable&)>;
  const std::vector<std::pair<std::string, BinaryFn>> ops = {
      {"add", [](auto& a, auto& b) { return add(a, b); }},
      {"sub", [](auto& a, auto& b) { return sub(a, b); }},
      {"mul", [](auto& a, auto& b) { return mul(a, b); }},
      {"div", [](auto& a, auto& b) { return div(a, b); }},
  };
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{4}, {}}, {{2, 1, 3}, {4, 1}}};
  for (const auto& [name, op] : ops) {
    for (const auto& [sa, sb] : shapes) {
      check(name + " " + shape_str(sa) + " " + shape_str(sb),
            [&op](const Vars& v) { return op(v[0], v[1]); }, {input(sa), positive(sb)});
    }
  }
}

TEST_F(OpsGradcheckTest, ScalarOperands) {
  const Tensor x = positive({2, 3});
  check("add scalar", [](const Vars& v) { return add(v[0], 1.5); }, {x});
  check("sub scalar", [](const Vars& v) { return sub(v[0], 1.5); }, {x});
  check("scalar sub", [](const Vars& v) { return sub(1.5, v[0]); }, {x});
  check("mul scalar", [](const Vars& v) { return mul(v[0], -2.5); }, {x});
  check("div scalar", [](const Vars& v) { return div(v[0], 4.0); }, {x});
  check("pow 3", [](const Vars& v) { return pow(v[0], 3); }, {input({5})});
  check("pow 0.5", [](const Vars& v) { return pow(v[0], 0.5); }, {x});
}

TEST_F(OpsGradcheckTest, UnaryOps) {
  using UnaryFn = std::function<absl::StatusOr<Variable>(const Variable&)>;
  const std::vector<std::tuple<std::string, UnaryFn, bool>> ops = {
      {"neg", [](auto& x) { return neg(x); }, false},
      {"exp", [](auto& x) { return exp(x); }, false},
      {"log", [](auto& x) { return log(x); }, true},
      {"sqrt", [](auto& x) { return sqrt(x); }, true},
      {"square", [](auto& x) { return square(x); }, false},
      {"abs", [](auto& x) { return abs(x); }, false},
      {"tanh", [](auto& x) { return tanh(x); }, false},
      {"sigmoid", [](auto& x) { return sigmoid(x); }, false},
      {"relu", [](auto& x) { return relu(x); }, false},
      {"gelu", [](auto& x) { return gelu(x); }, false},
      {"clamp", [](auto& x) { return clamp(x, Scalar(-0.5), Scalar(0.5)); }, false},
      {"clamp min", [](auto& x) { return clamp(x, Scalar(0.1), std::nullopt); }, false},
  };
  for (const auto& [name, op, needs_positive] : ops) {
    const Tensor x = needs_positive ? positive({3, 4}) : input({3, 4}, -2, 2);
    check(name, [&op](const Vars& v) { return op(v[0]); }, {x});
  }
}

TEST_F(OpsGradcheckTest, WhereAndMaskedFill) {
  const Tensor cond = value_or_die(from_vector<bool>({true, false, true, false, false, true}, {2, 3}));
  check("where", [&cond](const Vars& v) { return where(cond, v[0], v[1]); },
        {input({2, 3}), input({3})});
  check("masked_fill", [&cond](const Vars& v) { return masked_fill(v[0], cond, 7.0); },
        {input({2, 3})});
}

TEST_F(OpsGradcheckTest, Reductions) {
  const Tensor x = input({2, 3, 4});
  check("sum all", [](const Vars& v) { return sum(v[0]); }, {x});
  check("sum dim 1", [](const Vars& v) { return sum(v[0], {1}); }, {x});
  check("sum dims keepdim", [](const Vars& v) { return sum(v[0], {0, 2}, true); }, {x});
  check("mean all", [](const Vars& v) { return mean(v[0]); }, {x});
  check("mean dim -1", [](const Vars& v) { return mean(v[0], {-1}); }, {x});
  check("mean keepdim", [](const Vars& v) { return mean(v[0], {0}, true); }, {x});
}

TEST_F(OpsGradcheckTest, Matmul) {
  const auto mm = [](const Vars& v) { return matmul(v[0], v[1]); };
  check("2d", mm, {input({3, 4}), input({4, 2})});
  check("batched", mm, {input({2, 3, 4}), input({2, 4, 5})});
  check("broadcast batch", mm, {input({2, 3, 4}), input({4, 5})});
  check("broadcast batch left", mm, {input({3, 4}), input({2, 4, 5})});
  check("vector @ matrix", mm, {input({4}), input({4, 3})});
  check("matrix @ vector", mm, {input({3, 4}), input({4})});
  check("vector @ vector", mm, {input({4}), input({4})});
  check("vector @ batched", mm, {input({4}), input({2, 4, 3})});
}

TEST_F(OpsGradcheckTest, Softmax) {
  const Tensor x = input({3, 5}, -3, 3);
  // A weighted sum makes the check see more than the (zero) gradient of sum(softmax).
  const Tensor w = input({3, 5});
  for (int64_t dim : {0, 1, -1}) {
    check("softmax " + std::to_string(dim), [&w, dim](const Vars& v) -> absl::StatusOr<Variable> {
      ASSIGN_OR_RETURN(Variable y, softmax(v[0], dim));
      return mul(y, Variable(w));
    }, {x});
    check("log_softmax " + std::to_string(dim), [&w, dim](const Vars& v) -> absl::StatusOr<Variable> {
      ASSIGN_OR_RETURN(Variable y, log_softmax(v[0], dim));
      return mul(y, Variable(w));
    }, {x});
  }
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
  check("contiguous of a transpose", [](const Vars& v) -> absl::StatusOr<Variable> {
    ASSIGN_OR_RETURN(Variable t, transpose(v[0], 0, 1));
    return contiguous(t);
  }, {x});
  check("cat", [](const Vars& v) { return cat(v, 1); }, {input({2, 1}), input({2, 3}), input({2, 2})});
  check("stack", [](const Vars& v) { return stack(v, -1); }, {input({2, 3}), input({2, 3})});
}

TEST_F(OpsGradcheckTest, Indexing) {
  const Tensor index = value_or_die(from_vector<int64_t>({2, 0, 2, 1}, {4}));  // 2 repeats
  check("index_select dim 0", [&index](const Vars& v) { return index_select(v[0], 0, index); },
        {input({3, 2})});
  check("index_select dim 1", [&index](const Vars& v) { return index_select(v[0], 1, index); },
        {input({2, 3})});
  const Tensor gather_index = value_or_die(from_vector<int64_t>({0, 0, 2, 1, 1, 1}, {2, 3}));
  check("gather", [&gather_index](const Vars& v) { return gather(v[0], 1, gather_index); },
        {input({2, 4})});
}

TEST_F(OpsGradcheckTest, CastGradientReturnsInTheInputDtype) {
  Variable x(value_or_die(ones({3})), true);
  ASSERT_OK_AND_ASSIGN(Variable y, to(x, DType::kF64));
  ASSERT_OK_AND_ASSIGN(Variable z, mul(y, 2.0));
  ASSERT_OK_AND_ASSIGN(Variable s, sum(z));
  ASSERT_OK(s.backward());
  EXPECT_EQ(x.grad().dtype(), DType::kF32);
  EXPECT_EQ(value_or_die(to_vector<float>(x.grad())), (std::vector<float>{2, 2, 2}));
}

TEST_F(OpsGradcheckTest, GradcheckCatchesAWrongBackward) {
  // A deliberately wrong formula: the value of square with the gradient of x.
  const GradcheckFn wrong = [](const Vars& v) -> absl::StatusOr<Variable> {
    ASSIGN_OR_RETURN(Variable y, square(v[0]));
    ASSIGN_OR_RETURN(Variable detached_sq_minus_x, sub(y.detach(), v[0].detach()));
    return add(detached_sq_minus_x, v[0]);
  };
  ts::testing::expect_error(gradcheck(wrong, {input({3})}), absl::StatusCode::kInternal,
                            {"gradcheck", "input 0", "central differences"});
}

}  // namespace
}  // namespace ts::autograd
