// Module: registration and dotted naming, recursive views, train/eval, to(),
// zero_grad, set_parameter, and the strict in-memory load_state_dict.
#include "nn/module.h"

#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/linear.h"
#include "nn/relu.h"
#include "nn/sequential.h"
#include "tensor/ops.h"
#include "tensor/status_macros.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

// A module with a parameter, a buffer and two children, to check names and order.
class Toy final : public Module {
 public:
  Toy() : Module("Toy") {
    register_parameter("scale", value_or_die(ones({3})));
    register_buffer("steps", value_or_die(zeros({}, {DType::kI64})));
    register_buffer("stats", value_or_die(zeros({3})));
    first = register_module("first", value_or_die(Linear::create(3, 4)));
    rest = register_module("rest", std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
                                       std::make_shared<ReLU>(), value_or_die(Linear::create(4, 2, false))}));
  }
  absl::StatusOr<Variable> forward(const Variable& x) override {
    ASSIGN_OR_RETURN(Variable y, autograd::mul(x, param("scale")));
    ASSIGN_OR_RETURN(y, first->forward(y));
    return rest->forward(y);
  }
  std::shared_ptr<Linear> first;
  std::shared_ptr<Sequential> rest;
};

std::vector<std::string> names_of(const auto& entries) {
  std::vector<std::string> names;
  for (const auto& entry : entries) names.push_back(entry.first);
  return names;
}

TEST(ModuleTest, NamesAreDottedInRegistrationOrder) {
  Toy toy;
  EXPECT_EQ(names_of(toy.named_parameters()),
            (std::vector<std::string>{"scale", "first.weight", "first.bias", "rest.1.weight"}));
  EXPECT_EQ(names_of(toy.named_buffers()), (std::vector<std::string>{"steps", "stats"}));
  EXPECT_EQ(names_of(toy.state_dict()), (std::vector<std::string>{"scale", "steps", "stats", "first.weight",
                                                                  "first.bias", "rest.1.weight"}));
  EXPECT_EQ(names_of(toy.named_modules()), (std::vector<std::string>{"first", "rest", "rest.0", "rest.1"}));
  EXPECT_EQ(toy.num_parameters(), 3 + 12 + 4 + 8);
  EXPECT_EQ(toy.parameters().size(), 4u);
  for (const Variable& p : toy.parameters()) EXPECT_TRUE(p.requires_grad());
}

TEST(ModuleTest, ParametersShareStateWithTheModule) {
  Toy toy;
  ASSERT_OK_AND_ASSIGN(Tensor x, ones({2, 3}));
  ASSERT_OK_AND_ASSIGN(Variable y, toy.forward(Variable(x)));
  ASSERT_OK_AND_ASSIGN(Variable loss, autograd::sum(y));
  ASSERT_OK(loss.backward());
  for (const auto& [name, p] : toy.named_parameters()) {
    EXPECT_TRUE(p.grad().defined()) << name;
  }
  toy.zero_grad();
  for (const auto& [name, p] : toy.named_parameters()) {
    EXPECT_FALSE(p.grad().defined()) << name;
  }
}

TEST(ModuleTest, TrainAndEvalAreRecursive) {
  Toy toy;
  EXPECT_TRUE(toy.is_training());
  toy.eval();
  EXPECT_FALSE(toy.is_training());
  EXPECT_FALSE(toy.first->is_training());
  EXPECT_FALSE(toy.rest->is_training());
  EXPECT_FALSE((*toy.rest)[1]->is_training());
  toy.train();
  EXPECT_TRUE((*toy.rest)[1]->is_training());
}

TEST(ModuleTest, ToDtypeConvertsFloatingTensorsOnly) {
  Toy toy;
  ASSERT_OK(toy.to(DType::kF64));
  for (const auto& [name, t] : toy.state_dict()) {
    EXPECT_EQ(t.dtype(), name == "steps" ? DType::kI64 : DType::kF64) << name;
  }
  // Forward still works: the layers read the converted parameters.
  ASSERT_OK_AND_ASSIGN(Tensor x, ones({2, 3}, {DType::kF64}));
  ASSERT_OK_AND_ASSIGN(Variable y, toy.forward(Variable(x)));
  EXPECT_EQ(y.dtype(), DType::kF64);
}

TEST(ModuleTest, ToDeviceMovesParametersGradientsAndBuffers) {
  TS_SKIP_WITHOUT_CUDA();
  Toy toy;
  ASSERT_OK_AND_ASSIGN(Tensor x, ones({2, 3}));
  ASSERT_OK_AND_ASSIGN(Variable y, toy.forward(Variable(x)));
  ASSERT_OK_AND_ASSIGN(Variable loss, autograd::sum(y));
  ASSERT_OK(loss.backward());
  ASSERT_OK(toy.to(Device::cuda(0)));
  for (const auto& [name, t] : toy.state_dict()) EXPECT_TRUE(t.device().is_cuda()) << name;
  for (const auto& [name, p] : toy.named_parameters()) EXPECT_TRUE(p.grad().device().is_cuda()) << name;
  ASSERT_OK_AND_ASSIGN(Tensor xc, to(x, Device::cuda(0)));
  ASSERT_OK_AND_ASSIGN(Variable yc, toy.forward(Variable(xc)));
  EXPECT_TRUE(yc.device().is_cuda());
}

TEST(ModuleTest, SetParameterReplacesWhatForwardUses) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Linear> lin, Linear::create(2, 1, false));
  ASSERT_OK_AND_ASSIGN(Tensor w, from_vector<float>({2, 3}, {1, 2}));
  ASSERT_OK(lin->set_parameter("weight", Variable(w, true)));
  ASSERT_OK_AND_ASSIGN(Tensor x, from_vector<float>({1, 1}, {1, 2}));
  ASSERT_OK_AND_ASSIGN(Variable y, lin->forward(Variable(x)));
  EXPECT_EQ(value_or_die(item<float>(y.data())), 5.0f);
  ASSERT_OK_AND_ASSIGN(Tensor wrong, zeros({3}));
  expect_error(lin->set_parameter("weight", Variable(wrong)), absl::StatusCode::kInvalidArgument,
               {"Linear", "weight", "f32[1, 2]", "f32[3]"});
  expect_error(lin->set_parameter("bias", Variable(wrong)), absl::StatusCode::kNotFound,
               {"no parameter 'bias'"});
}

TEST(ModuleTest, LoadStateDictCopiesInPlace) {
  Toy a, b;
  ASSERT_OK(a.load_state_dict(b.state_dict()));
  const NamedTensors sa = a.state_dict(), sb = b.state_dict();
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_FALSE(sa[i].second.shares_storage_with(sb[i].second)) << sa[i].first;
    ASSERT_OK_AND_ASSIGN(Tensor same, eq(sa[i].second, sb[i].second));
    ASSERT_OK_AND_ASSIGN(Tensor all_same, sum(same));
    EXPECT_EQ(value_or_die(item<int64_t>(all_same)), sa[i].second.numel()) << sa[i].first;
  }
}

TEST(ModuleTest, LoadStateDictErrorsNameTheEntryAndChangeNothing) {
  Toy toy;
  const NamedTensors good = Toy().state_dict();
  ASSERT_OK_AND_ASSIGN(Tensor before, clone(toy.first->named_parameters()[0].second.data()));

  NamedTensors missing(good.begin(), good.end() - 1);
  expect_error(toy.load_state_dict(missing), absl::StatusCode::kInvalidArgument,
               {"missing entry 'rest.1.weight'"});
  NamedTensors extra = good;
  extra.emplace_back("rest.1.bias", value_or_die(zeros({2})));
  expect_error(toy.load_state_dict(extra), absl::StatusCode::kInvalidArgument,
               {"unexpected entry 'rest.1.bias'"});
  NamedTensors bad_shape = good;
  bad_shape[3].second = value_or_die(zeros({4, 2}));
  expect_error(toy.load_state_dict(bad_shape), absl::StatusCode::kInvalidArgument,
               {"'first.weight'", "[4, 2]", "[4, 3]"});
  NamedTensors bad_dtype = good;
  bad_dtype[1].second = value_or_die(zeros({}, {DType::kI32}));
  expect_error(toy.load_state_dict(bad_dtype), absl::StatusCode::kInvalidArgument, {"'steps'", "i32", "i64"});
  NamedTensors twice = good;
  twice.push_back(good[0]);
  expect_error(toy.load_state_dict(twice), absl::StatusCode::kInvalidArgument, {"'scale' appears twice"});

  ASSERT_OK_AND_ASSIGN(Tensor same, eq(before, toy.first->named_parameters()[0].second.data()));
  ASSERT_OK_AND_ASSIGN(Tensor all_same, sum(same));
  EXPECT_EQ(value_or_die(item<int64_t>(all_same)), before.numel());
}

TEST(ModuleTest, SequentialErrorNamesTheFailingChild) {
  Sequential seq(
      {value_or_die(Linear::create(3, 4)), std::make_shared<ReLU>(), value_or_die(Linear::create(5, 2))});
  ASSERT_OK_AND_ASSIGN(Tensor x, ones({2, 3}));
  expect_error(seq.forward(Variable(x)).status(), absl::StatusCode::kInvalidArgument,
               {"Sequential[2] (Linear)", "in_features=5", "f32[2, 4]"});
}

}  // namespace
}  // namespace ts::nn
