// SGD against torch.optim.SGD's update written out in float64: one worked
// example by hand, then every valid option combination over three steps for
// each floating dtype; parameter groups, skipped parameters, strided
// parameters, a real backward pass, and the errors users meet.
#include "optim/sgd.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "tests/optim/rounding_testing.h"
#include "tests/tensor/testing.h"

namespace ts::optim {
namespace {

using autograd::Variable;
using ::ts::testing::expect_close;
using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;
using ::ts::testing::Ref;

Variable param_of(std::vector<double> values, Dims shape, DType dtype = DType::kF64) {
  return Variable(to(from_vector<double>(values, shape), dtype), true);
}

void set_grad(const Variable& v, std::vector<double> values) {
  v.set_grad(to(from_vector<double>(values, v.shape()), v.dtype()));
}

std::vector<double> values(const Tensor& t) { return to_vector<double>(t); }

TEST(SgdTest, NesterovWithWeightDecayMatchesAWorkedExample) {
  // p0 = 1, lr 0.1, momentum 0.9, weight decay 0.01, Nesterov; gradients
  // 0.5, -0.25, 1. By hand (g: gradient with decay, b: buffer, d: direction):
  //   1: g = 0.5 + 0.01*1 = 0.51; b = g = 0.51; d = 0.51 + 0.9*0.51 = 0.969
  //      p = 1 - 0.1*0.969 = 0.9031
  //   2: g = -0.25 + 0.009031 = -0.240969; b = 0.9*0.51 + g = 0.218031
  //      d = g + 0.9*b = -0.0447411; p = 0.9031 + 0.00447411 = 0.90757411
  //   3: g = 1 + 0.0090757411 = 1.0090757411; b = 0.9*0.218031 + g = 1.2053036411
  //      d = g + 0.9*b = 2.09384901809; p = 0.90757411 - 0.209384901809 = 0.698189208191
  Variable p = param_of({1.0}, {1});
  const SgdOptions options{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true};
  Sgd sgd({p}, options);
  const double grads[] = {0.5, -0.25, 1.0};
  const double expected[] = {0.9031, 0.90757411, 0.698189208191};
  for (int step = 0; step < 3; ++step) {
    set_grad(p, {grads[step]});
    sgd.step();
    EXPECT_NEAR(values(p.data())[0], expected[step], 1e-14) << "step " << step + 1;
  }
}

// torch.optim.SGD's _single_tensor_sgd on float64 values, in its own words;
// p and buf are then rounded to the parameter's dtype, as storage does.
struct Reference {
  std::vector<double> p, buf;
  bool has_buf = false;

  void step(const std::vector<double>& grad, const SgdOptions& o, DType dtype) {
    for (size_t i = 0; i < p.size(); ++i) {
      double d_p = grad[i];
      if (o.weight_decay != 0) d_p = d_p + o.weight_decay * p[i];
      if (o.momentum != 0) {
        buf[i] = has_buf ? o.momentum * buf[i] + (1 - o.dampening) * d_p : d_p;
        d_p = o.nesterov ? d_p + o.momentum * buf[i] : buf[i];
      }
      p[i] = p[i] - o.lr * d_p;
    }
    has_buf = o.momentum != 0;
    const Shape shape{static_cast<int64_t>(p.size())};
    p = ::ts::testing::ref_round(Ref{shape, p}, dtype).v;
    buf = ::ts::testing::ref_round(Ref{shape, buf}, dtype).v;
  }
};

std::vector<SgdOptions> every_valid_combination() {
  std::vector<SgdOptions> out;
  for (double momentum : {0.0, 0.9}) {
    for (double dampening : {0.0, 0.3}) {
      for (double weight_decay : {0.0, 0.01}) {
        for (bool nesterov : {false, true}) {
          if (nesterov && (momentum == 0 || dampening != 0)) continue;
          out.push_back({.lr = 0.1,
                         .momentum = momentum,
                         .dampening = dampening,
                         .weight_decay = weight_decay,
                         .nesterov = nesterov});
        }
      }
    }
  }
  return out;
}

std::string describe(const SgdOptions& o) {
  return "momentum " + std::to_string(o.momentum) + " dampening " + std::to_string(o.dampening) + " weight_decay " +
         std::to_string(o.weight_decay) + (o.nesterov ? " nesterov" : "");
}

// One step of _single_tensor_sgd in float64 from the optimizer's own state
// (its stored parameter and momentum buffer), not rounded: what storing the
// result in the parameter's dtype must round. `*_scale` add up the
// magnitudes the step's operations round (rounding_testing.h).
struct SgdStep {
  std::vector<double> p, buf, p_scale, buf_scale;
};
SgdStep exact_sgd_step(const std::vector<double>& p, const std::vector<double>& buf, bool has_buf,
                       const std::vector<double>& grad, const SgdOptions& o) {
  SgdStep s;
  for (size_t i = 0; i < p.size(); ++i) {
    const double decay = o.weight_decay * p[i];
    double d_p = grad[i] + decay;
    const double g_scale = std::abs(grad[i]) + std::abs(decay);
    double b = 0, b_scale = 0;
    if (o.momentum != 0) {
      b = has_buf ? o.momentum * buf[i] + (1 - o.dampening) * d_p : d_p;
      b_scale = (has_buf ? std::abs(buf[i]) : 0) + g_scale + std::abs(b);
      d_p = o.nesterov ? d_p + o.momentum * b : b;
    }
    const double p_new = p[i] - o.lr * d_p;
    s.p.push_back(p_new);
    s.buf.push_back(b);
    s.p_scale.push_back(std::abs(p[i]) + std::abs(p_new) + g_scale + b_scale + std::abs(d_p));
    s.buf_scale.push_back(b_scale);
  }
  return s;
}

class SgdReferenceTest : public ::ts::testing::SeededTest {};

// Each step is checked from the optimizer's state before it, so that a
// rounding that went the other way in an earlier step (the float step can
// land a hair across a rounding boundary from the exact one) does not carry
// into the next comparison.
TEST_F(SgdReferenceTest, EveryOptionCombinationMatchesFloat64ForThreeSteps) {
  const std::vector<SgdOptions> cases = every_valid_combination();
  ASSERT_EQ(cases.size(), 10u);
  for (DType dtype : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    for (const SgdOptions& options : cases) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + describe(options));
      const std::vector<Shape> shapes = {{3, 4}, {5}};
      std::vector<Variable> params;
      for (const Shape& shape : shapes) params.emplace_back(random_tensor(rng(), shape, dtype), true);
      Sgd sgd(params, options);
      for (int step = 0; step < 3; ++step) {
        std::map<std::string, Tensor> state;
        for (const auto& [name, t] : sgd.state()) state.emplace(name, t);
        std::vector<SgdStep> want;
        for (size_t i = 0; i < params.size(); ++i) {
          const std::string buffer_name = "state.0." + std::to_string(i) + ".momentum_buffer";
          const bool has_buf = state.count(buffer_name) > 0;
          ASSERT_EQ(has_buf, options.momentum != 0 && step > 0) << buffer_name;
          const std::vector<double> p = values(params[i].data());
          const std::vector<double> buf = has_buf ? values(state.at(buffer_name)) : std::vector<double>(p.size());
          params[i].set_grad(random_tensor(rng(), shapes[i], dtype));
          want.push_back(exact_sgd_step(p, buf, has_buf, values(params[i].grad()), options));
        }
        sgd.step();
        state.clear();
        for (const auto& [name, t] : sgd.state()) state.emplace(name, t);
        for (size_t i = 0; i < params.size(); ++i) {
          const std::string at = std::to_string(i) + " after step " + std::to_string(step + 1);
          testing::expect_rounding_of(params[i].data(), want[i].p, want[i].p_scale, "param " + at);
          if (options.momentum == 0) continue;
          const std::string buffer_name = "state.0." + std::to_string(i) + ".momentum_buffer";
          ASSERT_EQ(state.count(buffer_name), 1u) << buffer_name;
          testing::expect_rounding_of(state.at(buffer_name), want[i].buf, want[i].buf_scale, "momentum buffer " + at);
        }
      }
    }
  }
}

TEST_F(SgdReferenceTest, GroupsKeepTheirOwnOptions) {
  // As MLBench recipes do: batch-norm parameters without weight decay.
  Variable conv(random_tensor(rng(), {4, 3}, DType::kF64), true);
  Variable bn(random_tensor(rng(), {4}, DType::kF64), true);
  const SgdOptions with_decay{.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-2, .nesterov = true};
  const SgdOptions no_decay{.lr = 0.05, .momentum = 0.9, .nesterov = true};
  Sgd sgd({SgdParamGroup{{conv}, {"conv.weight"}, with_decay}, SgdParamGroup{{bn}, {"bn.weight"}, no_decay}});
  Reference conv_ref{values(conv.data()), std::vector<double>(12)};
  Reference bn_ref{values(bn.data()), std::vector<double>(4)};
  for (int step = 0; step < 3; ++step) {
    conv.set_grad(random_tensor(rng(), {4, 3}, DType::kF64));
    bn.set_grad(random_tensor(rng(), {4}, DType::kF64));
    conv_ref.step(values(conv.grad()), with_decay, DType::kF64);
    bn_ref.step(values(bn.grad()), no_decay, DType::kF64);
    sgd.step();
  }
  expect_close(conv.data(), Ref{{4, 3}, conv_ref.p}, 1e-12);
  expect_close(bn.data(), Ref{{4}, bn_ref.p}, 1e-12);
  EXPECT_EQ(sgd.num_groups(), 2);
  EXPECT_EQ(sgd.lr(1), 0.05);
  sgd.set_lr(0.2);
  EXPECT_EQ(sgd.lr(0), 0.2);
  EXPECT_EQ(sgd.lr(1), 0.2);
  EXPECT_EQ(sgd.options(0).weight_decay, 1e-2);
}

TEST_F(SgdReferenceTest, ParametersWithoutGradientsAreSkippedAndStartTheirBufferLater) {
  Variable a = param_of({1, 2}, {2}), b = param_of({3}, {1});
  const SgdOptions options{.lr = 0.5, .momentum = 0.9};
  Sgd sgd({a, b}, options);
  Reference a_ref{{1, 2}, {0, 0}}, b_ref{{3}, {0}};
  set_grad(a, {1, 1});
  a_ref.step({1, 1}, options, DType::kF64);
  sgd.step();
  EXPECT_EQ(values(b.data()), (std::vector<double>{3}));
  // b's first step takes its gradient as the buffer, whatever a has done.
  set_grad(b, {2});
  b_ref.step({2}, options, DType::kF64);
  a_ref.step({1, 1}, options, DType::kF64);
  sgd.step();
  EXPECT_EQ(values(a.data()), a_ref.p);
  EXPECT_EQ(values(b.data()), b_ref.p);
  sgd.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
  sgd.step();  // nothing to do
  EXPECT_EQ(values(a.data()), a_ref.p);
}

TEST_F(SgdReferenceTest, StridedParameterIsUpdatedInPlace) {
  Tensor storage_view = random_tensor(rng(), {3, 4}, DType::kF32, -1, 1, ::ts::testing::Layout::kTransposed);
  ASSERT_FALSE(storage_view.is_contiguous());
  Variable p(storage_view, true);
  const std::vector<double> before = values(p.data());
  const SgdOptions options{.lr = 0.1, .momentum = 0.9};
  Sgd sgd({p}, options);
  Reference ref{before, std::vector<double>(12)};
  for (int step = 0; step < 2; ++step) {
    p.set_grad(random_tensor(rng(), {3, 4}, DType::kF32));
    ref.step(values(p.grad()), options, DType::kF32);
    sgd.step();
  }
  EXPECT_TRUE(p.data().shares_storage_with(storage_view));
  expect_close(storage_view, Ref{{3, 4}, ref.p}, 1e-5);
}

TEST(SgdTest, StepsOnGradientsFromBackward) {
  // loss = sum(w * x): dloss/dw = x.
  Variable w = param_of({1, 2, 3}, {3}, DType::kF32);
  Variable x = param_of({0.5, -1, 2}, {3}, DType::kF32);
  x.set_requires_grad(false);
  autograd::sum(w * x).backward();
  Sgd sgd({w}, {.lr = 0.1});
  sgd.step();
  EXPECT_EQ(values(w.data()), (std::vector<double>{1 - 0.1f * 0.5f, 2 + 0.1f, 3 - 0.1f * 2}));
  EXPECT_FALSE(w.grad_fn());  // the update recorded no graph
}

TEST(SgdTest, InvalidOptionsAreErrorsNamingTheField) {
  Variable p = param_of({1}, {1});
  expect_throws(absl::StatusCode::kInvalidArgument, {"nesterov", "momentum > 0", "dampening 0"},
                [&] { Sgd sgd({p}, {.lr = 0.1, .momentum = 0, .nesterov = true}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"nesterov", "dampening 0.1"},
                [&] { Sgd sgd({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"parameter group 0", "lr", "-1"},
                [&] { Sgd sgd({p}, {.lr = -1}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"momentum"}, [&] { Sgd sgd({p}, {.lr = 0.1, .momentum = -0.5}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"weight_decay"},
                [&] { Sgd sgd({p}, {.lr = 0.1, .weight_decay = -1}); });
  // The same check, before any parameter exists.
  expect_throws(absl::StatusCode::kInvalidArgument, {"Sgd: lr", "-1"}, [] { validate({.lr = -1}); });
  validate({.lr = 0.1, .momentum = 0.9, .nesterov = true});
}

TEST(SgdTest, InvalidParameterListsAreErrors) {
  Variable p = param_of({1}, {1});
  expect_throws(absl::StatusCode::kInvalidArgument, {"\"0.1\"", "more than once"}, [&] { Sgd sgd({p, p}, {}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"\"w\"", "used twice"}, [&] {
    Sgd sgd({{"w", p}, {"w", param_of({1}, {1})}}, {});
  });
  expect_throws(absl::StatusCode::kInvalidArgument, {"undefined"}, [] { Sgd sgd({Variable()}, {}); });
  Variable ints(from_vector<int32_t>(std::vector<int32_t>{1}, {1}), false);
  expect_throws(absl::StatusCode::kInvalidArgument, {"\"steps\"", "i32", "not floating-point"}, [&] {
    Sgd sgd({{"steps", ints}}, {});
  });
  expect_throws(absl::StatusCode::kInvalidArgument, {"1 parameters but 2 names"}, [&] {
    Sgd sgd({SgdParamGroup{{p}, {"a", "b"}, {}}});
  });
  expect_throws(absl::StatusCode::kInvalidArgument, {"no parameter groups"},
                [] { Sgd sgd(std::vector<SgdParamGroup>{}); });
}

TEST(SgdTest, GroupIndexOutOfRangeIsAnError) {
  Sgd sgd({param_of({1}, {1})}, {.lr = 0.1});
  expect_throws(absl::StatusCode::kOutOfRange, {"parameter group 1", "[0, 1)"}, [&] { sgd.lr(1); });
  expect_throws(absl::StatusCode::kOutOfRange, {"parameter group -1"}, [&] { sgd.set_lr(-1, 0.5); });
  // An lr that load_state would refuse is refused when set.
  expect_throws(absl::StatusCode::kInvalidArgument, {"Sgd.set_lr", "parameter group 0", "-1"},
                [&] { sgd.set_lr(0, -1); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"Sgd.set_lr", "nan"}, [&] { sgd.set_lr(0, std::nan("")); });
  EXPECT_EQ(sgd.lr(0), 0.1);
}

TEST(SgdTest, MismatchedGradientFailsTheStepBeforeAnyUpdate) {
  Variable a = param_of({1, 2}, {2}), b = param_of({3, 4}, {2});
  Sgd sgd({{"a", a}, {"b", b}}, {.lr = 0.1, .momentum = 0.9});
  set_grad(a, {1, 1});
  b.set_grad(from_vector<double>(std::vector<double>{1, 1, 1}, {3}));
  expect_throws(absl::StatusCode::kInvalidArgument, {"\"b\"", "f64[2]", "f64[3]"}, [&] { sgd.step(); });
  EXPECT_EQ(values(a.data()), (std::vector<double>{1, 2}));  // a untouched
  for (const auto& [name, tensor] : sgd.state()) EXPECT_EQ(name.find("momentum_buffer"), std::string::npos) << name;
}

}  // namespace
}  // namespace ts::optim
