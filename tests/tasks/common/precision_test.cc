// tasks/common/precision: --dtype/--tf32/--channels_last parsed, inputs cast
// and laid out, and PrecisionStep's step on a small CNN: in f32 the model's
// own parameters; in f16 apex O2 (batch norm in f32, f32 masters rounded back
// into the model, an overflowed step skipped with nothing changed); masters
// taken from the weights the model holds when the step is made (those DDP
// broadcast); gradients adding up over backwards until one unscale.
#include "tasks/common/precision.h"

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/flatten.h"
#include "nn/linear.h"
#include "nn/losses.h"
#include "nn/relu.h"
#include "nn/sequential.h"
#include "optim/sgd.h"
#include "tensor/ops.h"
#include "tensor/precision.h"
#include "tensor/random.h"
#include "tests/tensor/testing.h"

namespace ts::tasks {
namespace {

using namespace ts::testing;  // NOLINT

std::shared_ptr<nn::Sequential> small_cnn() {
  manual_seed(7);
  const nn::functional::ConvOptions<2> same{.padding = {1, 1}};
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Conv2d>(3, 4, std::array<int64_t, 2>{3, 3}, same, false),
                                          std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(4 * 4 * 4, 5));
}

const autograd::Variable& parameter(const PrecisionStep::NamedParameters& params, const std::string& name) {
  for (const auto& [n, v] : params) {
    if (n == name) return v;
  }
  ADD_FAILURE() << "no parameter " << name;
  return params.front().second;
}

std::vector<double> values(const Tensor& t) { return to_vector<double>(to(contiguous(t), DType::kF64)); }

bool all_finite(const Tensor& t) {
  for (double v : values(t)) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

struct Batch {
  Tensor images = rand({6, 3, 4, 4}, {DType::kF32, Device::cpu()});
  Tensor labels = from_vector<int64_t>(std::vector<int64_t>{0, 1, 2, 3, 4, 0}, {6});
};

TEST(PrecisionTest, ParsesTheDtypeInAnyCase) {
  const Precision f16 = value_or_die(Precision::parse("F16", /*tf32=*/false, /*channels_last=*/true));
  EXPECT_EQ(f16.dtype, DType::kF16);
  EXPECT_TRUE(f16.mixed());
  EXPECT_EQ(f16.label(), "f16/channels_last");
  const Precision f32 = value_or_die(Precision::parse("f32", true, false));
  EXPECT_FALSE(f32.mixed());
  EXPECT_EQ(f32.label(), "f32+tf32");
  EXPECT_EQ(value_or_die(Precision::parse("bf16", false, false)).dtype, DType::kBF16);
  EXPECT_EQ(f16.to_json().dump(-1), R"({"dtype":"f16","tf32":false,"channels_last":true})");
  expect_error(Precision::parse("f8", false, false).status(), absl::StatusCode::kInvalidArgument,
               {"--dtype=f8", "f32, f16 or bf16"});
}

TEST(PrecisionTest, InputsTakeTheModelsDtypeAndLayout) {
  const Precision p{DType::kBF16, false, /*channels_last=*/true};
  const Tensor images = rand({2, 3, 4, 5}, {DType::kF32, Device::cpu()});
  const Tensor in = p.input(images);
  EXPECT_EQ(in.dtype(), DType::kBF16);
  EXPECT_EQ(in.suggest_memory_format(), MemoryFormat::kChannelsLast);
  EXPECT_TRUE(in.is_contiguous(MemoryFormat::kChannelsLast));
  expect_equal(in, ref_round(ref_of(images), DType::kBF16), "images");
  // Already channels-last: only cast. One channel (dense in both layouts,
  // as Fashion-MNIST's images): it must still say channels-last.
  const Tensor already = p.input(contiguous(images, MemoryFormat::kChannelsLast));
  EXPECT_EQ(already.suggest_memory_format(), MemoryFormat::kChannelsLast);
  expect_equal(already, ref_round(ref_of(images), DType::kBF16), "channels-last images");
  const Tensor gray = rand({2, 1, 4, 4}, {DType::kF32, Device::cpu()});
  for (const Precision q : {p, Precision{DType::kF32, false, true}}) {
    const Tensor in_gray = q.input(gray);
    EXPECT_EQ(in_gray.suggest_memory_format(), MemoryFormat::kChannelsLast) << q.label();
    expect_equal(in_gray, ref_round(ref_of(gray), q.dtype), "one-channel images");
  }
  // 2-D floats are cast but have no channels-last; integers pass as they are.
  const Tensor features = p.input(rand({2, 3}, {DType::kF32, Device::cpu()}));
  EXPECT_EQ(features.dtype(), DType::kBF16);
  EXPECT_TRUE(features.is_contiguous());
  const Tensor labels = from_vector<int64_t>(std::vector<int64_t>{1, 2}, {2});
  EXPECT_TRUE(p.input(labels).shares_storage_with(labels));
  // f32 row-major: the tensor itself.
  EXPECT_TRUE(Precision{}.input(images).shares_storage_with(images));
}

TEST(PrecisionTest, F32StepsTheModelsOwnParameters) {
  const auto model = small_cnn();
  PrecisionStep step(model, Precision{DType::kF32, /*tf32=*/true, false});
  EXPECT_TRUE(allow_tf32());
  const auto named = model->named_parameters();
  ASSERT_EQ(step.optimized().size(), named.size());
  for (size_t i = 0; i < named.size(); ++i) EXPECT_EQ(step.optimized()[i].second.id(), named[i].second.id());
  const Batch b;
  const Tensor before = clone(named.front().second.data());
  optim::Sgd sgd(step.optimized(), {.lr = 0.1});
  step.backward(nn::cross_entropy(model->forward(autograd::Variable(b.images)), b.labels));
  ASSERT_TRUE(value_or_die(step.unscale(1)));
  EXPECT_TRUE(named.front().second.grad().defined());
  sgd.step();
  step.after_step();
  EXPECT_NE(values(named.front().second.data()), values(before));
  EXPECT_EQ(step.skipped_steps(), 0);
  set_allow_tf32(false);
}

TEST(PrecisionTest, F16StepsMastersAndRoundsThemIntoTheModel) {
  const auto model = small_cnn();
  const Precision p{DType::kF16, false, /*channels_last=*/true};
  PrecisionStep step(model, p);
  const auto named = model->named_parameters();
  const autograd::Variable& conv = parameter(named, "0.weight");
  const autograd::Variable& bn = parameter(named, "1.weight");
  EXPECT_EQ(conv.dtype(), DType::kF16);
  EXPECT_EQ(bn.dtype(), DType::kF32);  // batch norm keeps f32 and is its own master
  const autograd::Variable& conv_master = parameter(step.optimized(), "0.weight");
  EXPECT_EQ(conv_master.dtype(), DType::kF32);
  EXPECT_NE(conv_master.id(), conv.id());
  EXPECT_EQ(parameter(step.optimized(), "1.weight").id(), bn.id());

  const Batch b;
  optim::Sgd sgd(step.optimized(), {.lr = 0.1});
  const Tensor master_before = clone(conv_master.data());
  const autograd::Variable loss = nn::cross_entropy(model->forward(autograd::Variable(step.input(b.images))), b.labels);
  step.backward(loss);
  ASSERT_TRUE(value_or_die(step.unscale(1)));
  // The masters hold the unscaled gradients; the model's are read once more
  // by nothing and cleared after the step.
  ASSERT_TRUE(conv_master.grad().defined());
  EXPECT_TRUE(all_finite(conv_master.grad()));
  sgd.step();
  step.after_step();
  EXPECT_NE(values(conv_master.data()), values(master_before));
  expect_equal(conv.data(), ref_round(ref_of(conv_master.data()), DType::kF16), "the model's conv weight");
  EXPECT_FALSE(conv.grad().defined());
  EXPECT_EQ(step.skipped_steps(), 0);
}

TEST(PrecisionTest, F16SkipsAnOverflowedStepChangingNothing) {
  const auto model = small_cnn();
  PrecisionStep step(model, Precision{DType::kF16, false, false});
  const Batch b;
  const autograd::Variable& conv_master = parameter(step.optimized(), "0.weight");
  const Tensor master_before = clone(conv_master.data());
  const autograd::Variable loss =
      nn::cross_entropy(model->forward(autograd::Variable(step.input(b.images))), b.labels) *
      std::numeric_limits<double>::infinity();
  step.backward(loss);
  EXPECT_FALSE(value_or_die(step.unscale(1)));
  EXPECT_EQ(step.skipped_steps(), 1);
  EXPECT_EQ(values(conv_master.data()), values(master_before));
  EXPECT_FALSE(conv_master.grad().defined());
  EXPECT_FALSE(parameter(model->named_parameters(), "0.weight").grad().defined());
}

TEST(PrecisionTest, F16GradientsAddUpOverBackwardsUntilUnscaled) {
  // The Trainer's gradient accumulation: a backward per micro-batch, then one
  // unscale. Twice the same loss gives twice the gradients, exactly (the
  // scale, from the scaler options given, is a power of two).
  const Precision p{DType::kF16, false, false};
  const optim::LossScalerOptions scaler = optim::LossScalerOptions::mlbench_gnmt();
  const Batch b;
  const auto loss_of = [&](const PrecisionStep& step, nn::Sequential& model) {
    return nn::cross_entropy(model.forward(autograd::Variable(step.input(b.images))), b.labels);
  };
  const auto once_model = small_cnn();
  PrecisionStep once(once_model, p, scaler);
  once.backward(loss_of(once, *once_model));
  ASSERT_TRUE(value_or_die(once.unscale(1)));
  const auto twice_model = small_cnn();
  PrecisionStep twice(twice_model, p, scaler);
  twice.backward(loss_of(twice, *twice_model));
  twice.backward(loss_of(twice, *twice_model));
  ASSERT_TRUE(value_or_die(twice.unscale(1)));
  ASSERT_NE(twice.mixed(), nullptr);
  EXPECT_EQ(twice.mixed()->scaler().scale(), 1024);
  ASSERT_EQ(once.optimized().size(), twice.optimized().size());
  for (size_t i = 0; i < once.optimized().size(); ++i) {
    const auto& [name, master] = once.optimized()[i];
    SCOPED_TRACE(name);
    std::vector<double> doubled = values(master.grad());
    for (double& v : doubled) v *= 2;
    EXPECT_EQ(values(twice.optimized()[i].second.grad()), doubled);
  }
}

TEST(PrecisionTest, MastersStartFromTheWeightsTheModelHoldsThen) {
  // DDP's broadcast replaces rank 0's weights in the cast model before the
  // step is made; the masters must start from those.
  const auto model = small_cnn();
  const Precision p{DType::kF16, false, false};
  p.cast(*model);
  const autograd::Variable conv = parameter(model->named_parameters(), "0.weight");
  copy_(conv.data(), to(rand(conv.shape(), {DType::kF32, Device::cpu()}), DType::kF16));
  PrecisionStep step(model, p);  // casting again changes nothing
  EXPECT_EQ(conv.dtype(), DType::kF16);
  expect_equal(parameter(step.optimized(), "0.weight").data(), ref_of(conv.data()), "the master");
}

}  // namespace
}  // namespace ts::tasks
