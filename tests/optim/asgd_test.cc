// ASGD against torch.optim.ASGD: worked examples from torch itself
// (tools/golden/optim_torch.py), the parameter and its average after each
// step, in f64 and f32; state for an exact resume (the scalars eta and mu
// included); the averages evaluation reads; errors.
#include "optim/asgd.h"

#include <map>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "tests/optim/resume_testing.h"
#include "tests/tensor/testing.h"

namespace ts::optim {
namespace {

using autograd::Variable;
using ::ts::testing::expect_close;
using ::ts::testing::expect_error;
using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;
using ::ts::testing::Ref;

// The parameter, then its average, after each of three steps, printed by
// tools/golden/optim_torch.py (torch 2.15.0, float64, foreach=False).
struct TorchExample {
  const char* name;
  AsgdOptions options;
  std::vector<std::vector<double>> after_step;
};

TEST(AsgdTest, MatchesTorchOnWorkedExamples) {
  const std::vector<std::vector<double>> grads = {{0.5, -0.25, 1.0}, {-0.3, 0.75, 0.2}, {0.1, 0.1, -2.0}};
  const std::vector<TorchExample> examples = {
      {"asgd defaults",
       {.lr = 0.1},
       {{0.94998999925479288, -1.9749799996271729, 0.39999499850980935},
        {0.94998999925479288, -1.9749799996271729, 0.39999499850980935},
        {0.97998027412058908, -2.0499596867116079, 0.37999114879356949},
        {0.97998027412058908, -2.0499596867116079, 0.37999114879356949},
        {0.96997062481790697, -2.0599390370702415, 0.57998434188488535},
        {0.96997062481790697, -2.0599390370702415, 0.57998434188488535}}},
      {"asgd as awd-lstm",
       {.lr = 0.1, .lambd = 0, .t0 = 0, .weight_decay = 1.2e-6},
       {{0.94999987925494012, -1.9749997596274673, 0.39999993850988297},
        {0.94999987925494012, -1.9749997596274673, 0.39999993850988297},
        {0.97999976570198777, -2.0499995237450799, 0.37999989021186642},
        {0.97999976570198777, -2.0499995237450799, 0.37999989021186642},
        {0.96999964795300253, -2.0599992778941449, 0.5799998475921111},
        {0.97499970682749515, -2.0549994008196126, 0.47999986890198876}}},
      {"asgd, decay",
       {.lr = 0.2, .lambd = 0.05, .alpha = 0.5, .t0 = 0, .weight_decay = 0.01},
       {{0.88799999833107002, -1.9259999988973142, 0.29399999693036083},
        {0.88799999833107002, -1.9259999988973142, 0.29399999693036083},
        {0.93709911311711869, -2.0522582770079913, 0.25068801845818361},
        {0.93709911311711869, -2.0522582770079913, 0.25068801845818361},
        {0.9061617664838284, -2.0476767661053445, 0.64376840748514075},
        {0.92163043980047354, -2.0499675215566677, 0.44722821297166215}}},
  };
  for (const TorchExample& example : examples) {
    for (const auto& [dtype, tol] : {std::pair{DType::kF64, 1e-14}, std::pair{DType::kF32, 1e-6}}) {
      SCOPED_TRACE(std::string(example.name) + " " + std::string(dtype_name(dtype)));
      const Variable p(to(from_vector<double>(std::vector<double>{1, -2, 0.5}, {3}), dtype), true);
      Asgd asgd({{"p", p}}, example.options);
      for (size_t step = 0; step < grads.size(); ++step) {
        p.set_grad(to(from_vector<double>(grads[step], {3}), dtype));
        asgd.step();
        const std::string when = "after step " + std::to_string(step + 1);
        expect_close(p.data(), Ref{{3}, example.after_step[2 * step]}, tol, 1.0, "param " + when);
        expect_close(asgd.averages()[0].second, Ref{{3}, example.after_step[2 * step + 1]}, tol, 1.0, "ax " + when);
      }
    }
  }
}

class AsgdStateTest : public ::ts::testing::SeededTest {};

// Saved after two steps and resumed by a fresh optimizer (eta and mu, which
// lag a step behind, included), a run continues exactly as the
// uninterrupted one.
TEST_F(AsgdStateTest, ResumesBitForBit) {
  const AsgdOptions options{.lr = 0.05, .lambd = 0.01, .t0 = 1, .weight_decay = 1e-3};
  const auto r = testing::run_with_resume<Asgd>(options, {4, 2}, rng());
  EXPECT_EQ(to_vector<float>(r.resumed_param.data()), to_vector<float>(r.uninterrupted_param.data()));
  EXPECT_EQ(to_vector<float>(r.resumed->averages()[0].second), to_vector<float>(r.uninterrupted->averages()[0].second));
  std::map<std::string, Tensor> by_name(r.saved.begin(), r.saved.end());
  EXPECT_EQ(by_name.at("state.w.eta").shape(), Shape{});
  EXPECT_EQ(by_name.at("state.w.mu").dtype(), DType::kF64);
  EXPECT_EQ(by_name.at("state.w.ax").shape(), (Shape{4, 2}));

  const Variable fresh(clone(r.initial), true);
  Asgd other({{"w", fresh}}, options);
  EXPECT_EQ(to_vector<float>(other.averages()[0].second), to_vector<float>(r.initial));  // not stepped: itself
  NamedTensors bad = r.saved;
  for (auto& entry : bad) {
    if (entry.first == "state.w.eta") entry.second = zeros({4, 2}, {DType::kF64});
  }
  expect_error(other.load_state(bad), absl::StatusCode::kInvalidArgument, {"Asgd.load_state", "\"state.w.eta\""});
}

TEST(AsgdTest, InvalidOptionsAreErrorsNamingTheField) {
  const Variable p(from_vector<double>(std::vector<double>{1}, {1}), true);
  expect_throws(absl::StatusCode::kInvalidArgument, {"Asgd: parameter group 0", "lambd", "-1"},
                [&] { Asgd asgd({p}, {.lambd = -1}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"Asgd: t0"}, [] { validate(AsgdOptions{.t0 = -2}); });
}

}  // namespace
}  // namespace ts::optim
