// LSTM against torch.nn.LSTM from the same weights (the fixture written by
// tools/golden/lstm_torch.py): output, final h and c, and the gradients of
// the input, the initial state and every parameter, for two layers, a
// bidirectional batch-first layer and a bidirectional two-layer stack over
// padded variable-length sequences; f64 within 1e-10, f32 within 1e-5 on
// oneDNN's primitives and on our reference kernels.
// Also: PyTorch's parameter names, order and initialization, gradcheck, and
// the errors users meet.
#include "nn/lstm.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/checkpoint.h"
#include "nn/functional/cpu_reference_path.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_close;
using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;
using ::ts::testing::value_or_die;

constexpr char kFixture[] = "tests/nn/testdata/lstm_golden.tsckpt";

struct GoldenCase {
  std::string name;
  int64_t input, hidden;
  LstmOptions options;
  bool padded;
};

const GoldenCase kCases[] = {
    {"two_layers", 4, 5, {.num_layers = 2}, false},
    {"bidirectional_batch_first", 3, 4, {.batch_first = true, .bidirectional = true}, false},
    {"bidirectional_padded", 3, 4, {.num_layers = 2, .bidirectional = true}, true},
};

class LstmGoldenTest : public ::ts::testing::SeededTest {
 protected:
  void SetUp() override {
    for (auto& [name, t] : value_or_die(load_tensors(kFixture))) fixture_[name] = t;
  }
  const Tensor& at(const GoldenCase& c, const std::string& what) const { return fixture_.at(c.name + "." + what); }

  // Runs the case in `dtype` on `device` and compares with torch's f64
  // results.
  void check(const GoldenCase& c, DType dtype, double tol, Device device = Device::cpu()) {
    SCOPED_TRACE(absl::StrCat(c.name, " ", dtype_name(dtype), " on ", device.to_string()));
    LSTM lstm(c.input, c.hidden, c.options);
    lstm.to(dtype);
    NamedTensors weights;
    for (const auto& [name, unused] : lstm.state_dict()) weights.emplace_back(name, to(at(c, "param." + name), dtype));
    ASSERT_OK(lstm.load_state_dict(weights));
    lstm.to(device);
    const auto input = [&](const char* what) { return Variable(to(to(at(c, what), dtype), device), true); };
    const Variable x = input("input");
    const LstmState initial{input("h0"), input("c0")};
    const LstmOutput out = lstm.forward(x, initial, c.padded ? at(c, "lengths") : Tensor());
    const auto weighted = [&](const Variable& v, const char* grad) {
      return autograd::sum(v * Variable(to(to(at(c, grad), dtype), device)));
    };
    (weighted(out.output, "grad_output") + weighted(out.state.h, "grad_h_n") + weighted(out.state.c, "grad_c_n"))
        .backward();
    const auto expect = [&](const Tensor& ours, const std::string& what) {
      ASSERT_EQ(ours.shape(), at(c, what).shape());
      expect_close(ours, ::ts::testing::ref_of(at(c, what)), tol, 1.0, what);
    };
    expect(out.output.data(), "output");
    expect(out.state.h.data(), "h_n");
    expect(out.state.c.data(), "c_n");
    expect(x.grad(), "grad.input");
    expect(initial.h.grad(), "grad.h0");
    expect(initial.c.grad(), "grad.c0");
    for (const auto& [name, param] : lstm.named_parameters()) expect(param.grad(), "grad." + name);
  }

  std::map<std::string, Tensor> fixture_;
};

TEST_F(LstmGoldenTest, MatchesTorchInFloat64) {
  for (const GoldenCase& c : kCases) check(c, DType::kF64, 1e-10);
}

// f32 runs on oneDNN's LSTM primitives (the padded case on ours, which
// they cannot take), and on our kernels under TS_CPU_REFERENCE=1.
TEST_F(LstmGoldenTest, MatchesTorchInFloat32) {
  for (const GoldenCase& c : kCases) check(c, DType::kF32, 1e-5);
}

TEST_F(LstmGoldenTest, MatchesTorchInFloat32OnTheReferencePath) {
  functional::set_cpu_reference_path(true);
  for (const GoldenCase& c : kCases) check(c, DType::kF32, 1e-5);
  functional::set_cpu_reference_path(false);
}

// The same layer on CUDA, through cuDNN's RNN (TF32 off, the default).
TEST_F(LstmGoldenTest, MatchesTorchOnCuda) {
  TS_SKIP_WITHOUT_CUDA();
  for (const GoldenCase& c : kCases) {
    check(c, DType::kF64, 1e-10, Device::cuda(0));
    check(c, DType::kF32, 1e-5, Device::cuda(0));
  }
}

TEST_F(LstmGoldenTest, ParametersAreTorchsNamesShapesOrderAndInit) {
  manual_seed(seed());
  const LSTM lstm(3, 8, {.num_layers = 2, .bidirectional = true});
  const std::vector<std::string> want = {
      "weight_ih_l0",         "weight_hh_l0",         "bias_ih_l0",         "bias_hh_l0",
      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse",
      "weight_ih_l1",         "weight_hh_l1",         "bias_ih_l1",         "bias_hh_l1",
      "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"};
  std::vector<std::string> names;
  for (const auto& [name, param] : lstm.named_parameters()) {
    names.push_back(name);
    for (double v : to_vector<double>(param.data())) EXPECT_LE(std::abs(v), 1 / std::sqrt(8.0)) << name;
  }
  EXPECT_EQ(names, want);
  const auto params = lstm.named_parameters();
  EXPECT_EQ(params[0].second.shape(), (Shape{32, 3}));
  EXPECT_EQ(params[8].second.shape(), (Shape{32, 16}));  // layer 1 reads both directions
  EXPECT_EQ(LSTM(3, 8, {.bias = false}).named_parameters().size(), 2u);
}

TEST_F(LstmGoldenTest, Gradcheck) {
  manual_seed(seed());
  LSTM lstm(2, 3, {.num_layers = 2, .bidirectional = true});
  lstm.to(DType::kF64);
  const Tensor lengths = from_vector<int64_t>(std::vector<int64_t>{3, 2}, {2});
  std::vector<Tensor> inputs = {random_tensor(rng(), {3, 2, 2}, DType::kF64)};
  std::vector<Variable> params;
  for (const auto& [name, param] : lstm.named_parameters()) {
    inputs.push_back(param.data());
    params.push_back(param);
  }
  EXPECT_OK(autograd::gradcheck(
      [&](const std::vector<Variable>& v) {
        for (size_t i = 0; i < params.size(); ++i) lstm.set_parameter(lstm.named_parameters()[i].first, v[i + 1]);
        const LstmOutput out = lstm.forward(v[0], {}, lengths);
        return autograd::sum(out.output) + autograd::sum(out.state.c);
      },
      inputs));
}

TEST_F(LstmGoldenTest, BadInputsAreErrors) {
  LSTM lstm(3, 4);
  expect_throws(absl::StatusCode::kInvalidArgument, {"LSTM(input_size=3)", "[T, B, 3]", "f32[5, 2, 4]"}, [&] {
    lstm.forward(Variable(zeros({5, 2, 4})));
  });
  expect_throws(absl::StatusCode::kInvalidArgument, {"LSTM", "initial state", "f32[1, 2, 4]", "f32[1, 3, 4]"}, [&] {
    lstm.forward(Variable(zeros({5, 2, 3})), {Variable(zeros({1, 3, 4})), Variable(zeros({1, 3, 4}))});
  });
  // Weights of another dtype than the input (PyTorch: "input dtype does not
  // match weight dtype"): oneDNN would read f64 or f16 bytes as f32.
  for (const DType dtype : {DType::kF64, DType::kF16, DType::kBF16}) {
    LSTM other(3, 4);
    other.to(dtype);
    expect_throws(absl::StatusCode::kInvalidArgument,
                  {absl::StrCat("LSTM: parameter weight_ih_l0 is ", dtype_name(dtype), "[16, 3] on cpu"),
                   "input f32[5, 2, 3] on cpu"},
                  [&] {
                    other.forward(Variable(zeros({5, 2, 3})));
                  });
  }
  expect_throws(absl::StatusCode::kInvalidArgument, {"LSTM", "length 6 of sequence 1", "[1, 5]"}, [&] {
    lstm.forward(Variable(zeros({5, 2, 3})), {}, from_vector<int64_t>(std::vector<int64_t>{5, 6}, {2}));
  });
  expect_throws(absl::StatusCode::kInvalidArgument, {"LSTM(input_size=0"}, [] { LSTM(0, 4); });
}

}  // namespace
}  // namespace ts::nn
