// Module: registration and dotted naming, recursive views, train/eval, to(),
// zero_grad, set_parameter, the strict in-memory load_state_dict, and
// Sequential composing its stages' typed forwards.
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
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::expect_throws;

// A module with a parameter, a buffer and two children, to check names and order.
class Toy final : public Module {
 public:
  Toy() : Module("Toy") {
    register_parameter("scale", ones({3}));
    register_buffer("steps", zeros({}, {DType::kI64}));
    register_buffer("stats", zeros({3}));
    first = register_module("first", std::make_shared<Linear>(3, 4));
    rest = register_module(
        "rest", std::make_shared<Sequential>(std::make_shared<ReLU>(), std::make_shared<Linear>(4, 2, /*bias=*/false)));
  }
  Variable forward(const Variable& x) { return rest(first(x * param("scale"))); }

  Handle<Linear> first;
  Handle<Sequential> rest;
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
  EXPECT_EQ(names_of(toy.state_dict()),
            (std::vector<std::string>{"scale", "steps", "stats", "first.weight", "first.bias", "rest.1.weight"}));
  EXPECT_EQ(names_of(toy.named_modules()), (std::vector<std::string>{"first", "rest", "rest.0", "rest.1"}));
  EXPECT_EQ(toy.num_parameters(), 3 + 12 + 4 + 8);
  EXPECT_EQ(toy.parameters().size(), 4u);
  for (const Variable& p : toy.parameters()) EXPECT_TRUE(p.requires_grad());
}

TEST(ModuleTest, ParametersShareStateWithTheModule) {
  Toy toy;
  autograd::sum(toy.forward(Variable(ones({2, 3})))).backward();
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
  EXPECT_FALSE(toy.rest->children()[1].second->is_training());
  toy.train();
  EXPECT_TRUE(toy.rest->children()[1].second->is_training());
}

TEST(ModuleTest, ToDtypeConvertsFloatingTensorsOnly) {
  Toy toy;
  toy.to(DType::kF64);
  for (const auto& [name, t] : toy.state_dict()) {
    EXPECT_EQ(t.dtype(), name == "steps" ? DType::kI64 : DType::kF64) << name;
  }
  // Forward still works: the layers read the converted parameters.
  EXPECT_EQ(toy.forward(Variable(ones({2, 3}, {DType::kF64}))).dtype(), DType::kF64);
}

TEST(ModuleTest, ToDeviceMovesParametersGradientsAndBuffers) {
  TS_SKIP_WITHOUT_CUDA();
  Toy toy;
  const Tensor x = ones({2, 3});
  autograd::sum(toy.forward(Variable(x))).backward();
  toy.to(Device::cuda(0));
  for (const auto& [name, t] : toy.state_dict()) EXPECT_TRUE(t.device().is_cuda()) << name;
  for (const auto& [name, p] : toy.named_parameters()) EXPECT_TRUE(p.grad().device().is_cuda()) << name;
  EXPECT_TRUE(toy.forward(Variable(to(x, Device::cuda(0)))).device().is_cuda());
}

TEST(ModuleTest, SetParameterReplacesWhatForwardUses) {
  auto lin = std::make_shared<Linear>(2, 1, /*bias=*/false);
  lin->set_parameter("weight", Variable(from_vector<float>({2, 3}, {1, 2}), true));
  const Variable y = lin->forward(Variable(from_vector<float>({1, 1}, {1, 2})));
  EXPECT_EQ(item<float>(y.data()), 5.0f);
  const Tensor wrong = zeros({3});
  expect_throws(absl::StatusCode::kInvalidArgument, {"Linear", "weight", "f32[1, 2]", "f32[3]"},
                [&] { lin->set_parameter("weight", Variable(wrong)); });
  expect_throws(absl::StatusCode::kNotFound, {"no parameter 'bias'"},
                [&] { lin->set_parameter("bias", Variable(wrong)); });
}

TEST(ModuleTest, ATiedParameterIsListedOnceAndSavedUnderEachName) {
  // Two square layers sharing one weight: one parameter to optimize, as
  // PyTorch's named_parameters gives it; both names in the state dict.
  class Tied final : public Module {
   public:
    Tied() : Module("Tied") {
      a = register_module("a", std::make_shared<Linear>(3, 3, /*bias=*/false));
      b = register_module("b", std::make_shared<Linear>(3, 3, /*bias=*/false));
      b->set_parameter("weight", a->named_parameters().at(0).second);
    }
    Handle<Linear> a, b;
  };
  Tied tied;
  EXPECT_EQ(names_of(tied.named_parameters()), (std::vector<std::string>{"a.weight"}));
  EXPECT_EQ(tied.num_parameters(), 9);
  EXPECT_EQ(names_of(tied.state_dict()), (std::vector<std::string>{"a.weight", "b.weight"}));
  ASSERT_OK(tied.load_state_dict(tied.state_dict()));
}

TEST(ModuleTest, LoadStateDictCopiesInPlace) {
  Toy a, b;
  ASSERT_OK(a.load_state_dict(b.state_dict()));
  const NamedTensors sa = a.state_dict(), sb = b.state_dict();
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_FALSE(sa[i].second.shares_storage_with(sb[i].second)) << sa[i].first;
    EXPECT_EQ(item<int64_t>(sum(eq(sa[i].second, sb[i].second))), sa[i].second.numel()) << sa[i].first;
  }
}

TEST(ModuleTest, LoadStateDictErrorsNameTheEntryAndChangeNothing) {
  Toy toy;
  const NamedTensors good = Toy().state_dict();
  const Tensor before = clone(toy.first->named_parameters()[0].second.data());

  NamedTensors missing(good.begin(), good.end() - 1);
  expect_error(toy.load_state_dict(missing), absl::StatusCode::kInvalidArgument, {"missing entry 'rest.1.weight'"});
  NamedTensors extra = good;
  extra.emplace_back("rest.1.bias", zeros({2}));
  expect_error(toy.load_state_dict(extra), absl::StatusCode::kInvalidArgument, {"unexpected entry 'rest.1.bias'"});
  NamedTensors bad_shape = good;
  bad_shape[3].second = zeros({4, 2});
  expect_error(toy.load_state_dict(bad_shape), absl::StatusCode::kInvalidArgument,
               {"'first.weight'", "[4, 2]", "[4, 3]"});
  NamedTensors bad_dtype = good;
  bad_dtype[1].second = zeros({}, {DType::kI32});
  expect_error(toy.load_state_dict(bad_dtype), absl::StatusCode::kInvalidArgument, {"'steps'", "i32", "i64"});
  NamedTensors twice = good;
  twice.push_back(good[0]);
  expect_error(toy.load_state_dict(twice), absl::StatusCode::kInvalidArgument, {"'scale' appears twice"});

  EXPECT_EQ(item<int64_t>(sum(eq(before, toy.first->named_parameters()[0].second.data()))), before.numel());
}

TEST(ModuleTest, SequentialErrorNamesTheFailingChild) {
  Sequential seq(std::make_shared<Linear>(3, 4), std::make_shared<ReLU>(), std::make_shared<Linear>(5, 2));
  expect_throws(absl::StatusCode::kInvalidArgument, {"Sequential[2] (Linear)", "in_features=5", "f32[2, 4]"}, [&] {
    seq.forward(Variable(ones({2, 3})));
  });
}

TEST(ModuleTest, RegistrationBugsAreInternalErrors) {
  class BadNames final : public Module {
   public:
    explicit BadNames(const std::string& second) : Module("BadNames") {
      register_parameter("w", zeros({1}));
      register_buffer(second, zeros({1}));
    }
  };
  expect_throws(absl::StatusCode::kInternal, {"BadNames", "'w' registered twice"}, [] { BadNames("w"); });
  expect_throws(absl::StatusCode::kInternal, {"BadNames", "invalid name 'a.b'"}, [] { BadNames("a.b"); });
}

}  // namespace
}  // namespace ts::nn
