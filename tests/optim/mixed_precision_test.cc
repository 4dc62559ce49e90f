// Mixed precision's optimizer side: the dynamic loss scaler (presets, backoff
// and skip on overflow, growth after a clean window, cap, the minimum-scale
// error, state), the fused scaled copies (unscaled gradients: values, inf
// and NaN, an overflow when rounding into f16; masters rounded into the
// model; CUDA against the CPU), and f32 master
// weights for an f16 model: an injected inf skips the step leaving the
// parameters and the optimizer's state bitwise unchanged, the masters carry
// what f16 cannot hold, ranks that vote skip a step any of them overflowed
// in, and a resume from saved state is bit-exact.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "optim/loss_scaler.h"
#include "optim/mixed_precision.h"
#include "optim/scaled_copy.h"
#include "optim/sgd.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::optim {
namespace {

using autograd::Variable;
using ::ts::testing::expect_error;
using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;
using ::ts::testing::value_or_die;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(LossScalerTest, PresetsAreTheBenchmarks) {
  const LossScalerOptions gnmt = LossScalerOptions::mlbench_gnmt();
  EXPECT_EQ(gnmt.initial, 1024);
  EXPECT_EQ(gnmt.factor, 2);
  EXPECT_EQ(gnmt.window, 128);
  EXPECT_EQ(gnmt.max, 8192);
  const LossScalerOptions transformer = LossScalerOptions::mlbench_transformer();
  EXPECT_EQ(transformer.initial, 128);
  EXPECT_EQ(transformer.window, 2000);
  EXPECT_EQ(transformer.max, kInf);  // fairseq's scaler has no cap
  const LossScalerOptions torch = LossScalerOptions::pytorch_grad_scaler();
  EXPECT_EQ(torch.initial, 65536);
  EXPECT_EQ(torch.factor, 2);
  EXPECT_EQ(torch.window, 2000);
  EXPECT_EQ(torch.max, kInf);
  for (const LossScalerOptions& o : {gnmt, transformer, torch}) EXPECT_OK(validate(o));
}

TEST(LossScalerTest, BadOptionsNameTheField) {
  expect_error(validate({.factor = 1}), absl::StatusCode::kInvalidArgument, {"factor", "> 1"});
  expect_error(validate({.window = 0}), absl::StatusCode::kInvalidArgument, {"window"});
  expect_error(validate({.initial = 8, .max = 4}), absl::StatusCode::kInvalidArgument, {"max", ">= initial"});
  expect_error(validate({.min = 0}), absl::StatusCode::kInvalidArgument, {"min", "positive"});
}

TEST(LossScalerTest, OverflowSkipsAndBacksOffCleanWindowsGrowUpToTheCap) {
  DynamicLossScaler scaler({.initial = 1024, .factor = 2, .window = 3, .max = 4096, .min = 1});
  EXPECT_FALSE(*scaler.update(true));
  EXPECT_EQ(scaler.scale(), 512);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(*scaler.update(false));
  EXPECT_EQ(scaler.scale(), 512);  // two clean steps: not yet a window
  EXPECT_TRUE(*scaler.update(false));
  EXPECT_EQ(scaler.scale(), 1024);
  // An overflow restarts the window.
  EXPECT_TRUE(*scaler.update(false));
  EXPECT_FALSE(*scaler.update(true));
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(*scaler.update(false));
  EXPECT_EQ(scaler.scale(), 512);
  for (int i = 0; i < 30; ++i) EXPECT_TRUE(*scaler.update(false));
  EXPECT_EQ(scaler.scale(), 4096);
  EXPECT_EQ(scaler.skipped_steps(), 2);
}

// As fairseq and MLBench test it: a backoff to the minimum ends the run.
TEST(LossScalerTest, ReachingTheMinimumIsAnError) {
  DynamicLossScaler scaler({.initial = 4, .factor = 2, .window = 10, .max = 4, .min = 1});
  EXPECT_FALSE(*scaler.update(true));
  EXPECT_EQ(scaler.scale(), 2);
  expect_error(scaler.update(true).status(), absl::StatusCode::kFailedPrecondition,
               {"reached its minimum 1", "it is 2 after 1 skipped steps, and would be 1", "diverged"});
  expect_error(validate({.initial = 1, .min = 1}), absl::StatusCode::kInvalidArgument, {"initial", "> min"});
}

TEST(LossScalerTest, StateRoundTripsAndIsChecked) {
  DynamicLossScaler a({.initial = 64, .window = 5});
  ASSERT_FALSE(*a.update(true));
  ASSERT_TRUE(*a.update(false));
  DynamicLossScaler b({.initial = 64, .window = 5});
  ASSERT_OK(b.load_state(a.state()));
  EXPECT_EQ(b.scale(), 32);
  EXPECT_EQ(b.skipped_steps(), 1);
  // The same future: three more clean steps grow both.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(*a.update(false), *b.update(false));
  EXPECT_EQ(a.scale(), 64);
  EXPECT_EQ(b.scale(), 64);
  NamedTensors bad = a.state();
  bad[0].second = scalar_tensor(-1.0, {DType::kF64});
  expect_error(b.load_state(bad), absl::StatusCode::kInvalidArgument, {"scale -1"});
  bad.pop_back();
  expect_error(b.load_state(bad), absl::StatusCode::kNotFound, {"loss_scaler.skipped_steps"});
}

class ScaledCopyTest : public ::ts::testing::SeededTest {};

TEST_F(ScaledCopyTest, ScalesIntoF32OrInPlaceAndFindsInfAndNan) {
  const Tensor g16 = to(random_tensor(rng(), {5, 3}, DType::kF32), DType::kF16);
  const Tensor master = empty({5, 3}, {DType::kF32});
  const Tensor g32 = random_tensor(rng(), {7}, DType::kF32);
  const std::vector<float> before32 = to_vector<float>(g32);
  EXPECT_FALSE(unscale_gradients({{g16, master}, {g32, g32}}, 0.25));
  const std::vector<float> in16 = to_vector<float>(g16), out = to_vector<float>(master);
  for (size_t i = 0; i < in16.size(); ++i) EXPECT_EQ(out[i], in16[i] * 0.25f);
  const std::vector<float> after32 = to_vector<float>(g32);
  for (size_t i = 0; i < before32.size(); ++i) EXPECT_EQ(after32[i], before32[i] * 0.25f);

  for (const double bad : {kInf, std::nan("")}) {
    const Tensor g = from_vector<float>(std::vector<float>{1, static_cast<float>(bad), 3}, {3});
    EXPECT_TRUE(unscale_gradients({{g16, master}, {g, g}}, 0.5)) << bad;
  }
  // Finite in f16 (60000) but not once scaled by 2 and rounded back into f16.
  const Tensor big = to(from_vector<float>(std::vector<float>{60000}, {1}), DType::kF16);
  EXPECT_TRUE(unscale_gradients({{big, big}}, 2));
  expect_throws(absl::StatusCode::kInvalidArgument, {"unscale_gradients", "tensor 0", "f32[3]"}, [&] {
    unscale_gradients({{g16, empty({3}, {DType::kF32})}}, 1);
  });
}

// Each floating dtype on the CPU: 16-bit gradients into f32, f32 and f64 in
// place; a power-of-two factor scales exactly, so the values are exact; an
// inf anywhere is found.
TEST_F(ScaledCopyTest, EveryFloatDtypeUnscalesOnTheCpu) {
  for (const DType dtype : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor g = to(random_tensor(rng(), {37}, DType::kF64), dtype);
    const std::vector<double> before = to_vector<double>(g);
    const Tensor out = is_reduced_float(dtype) ? empty({37}, {DType::kF32}) : g;
    EXPECT_FALSE(unscale_gradients({{g, out}}, 1.0 / 1024));
    const std::vector<double> after = to_vector<double>(out);
    for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i] / 1024) << i;
    copy_(g.narrow(0, 30, 1), scalar_tensor(-kInf, {dtype}));
    EXPECT_TRUE(unscale_gradients({{g, out}}, 1.0 / 1024));
  }
}

TEST_F(ScaledCopyTest, MastersAreRoundedIntoTheModel) {
  const Tensor master = random_tensor(rng(), {9, 4}, DType::kF32);
  for (const DType dtype : {DType::kF16, DType::kBF16}) {
    const Tensor param = empty({9, 4}, {dtype});
    copy_masters({{master, param}});
    ::ts::testing::expect_equal(param, ::ts::testing::ref_of(to(master, dtype)), std::string(dtype_name(dtype)));
  }
  expect_throws(absl::StatusCode::kInvalidArgument, {"copy_masters", "tensor 0", "f64[9, 4]"}, [&] {
    copy_masters({{master, empty({9, 4}, {DType::kF64})}});
  });
}

TEST_F(ScaledCopyTest, CudaMatchesTheCpu) {
  TS_SKIP_WITHOUT_CUDA();
  const Device cuda = Device::cuda(0);
  for (const DType dtype : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    SCOPED_TRACE(dtype_name(dtype));
    // Large enough for several chunks of the multi-tensor kernel.
    const Tensor g = to(random_tensor(rng(), {70000}, DType::kF32), dtype);
    const DType to_dtype = is_reduced_float(dtype) ? DType::kF32 : dtype;
    const Tensor cpu_out = empty({70000}, {to_dtype}), gpu_out = empty({70000}, {to_dtype, cuda});
    const Tensor g_gpu = to(g, cuda);
    EXPECT_FALSE(unscale_gradients({{g, cpu_out}}, 1.0 / 1024));
    EXPECT_FALSE(unscale_gradients({{g_gpu, gpu_out}}, 1.0 / 1024));
    ::ts::testing::expect_equal(to(gpu_out, Device::cpu()), ::ts::testing::ref_of(cpu_out));
    copy_(g_gpu.narrow(0, 65000, 1), scalar_tensor(kInf, {dtype}));
    EXPECT_TRUE(unscale_gradients({{g_gpu, gpu_out}}, 1.0 / 1024));
  }
  // Masters into f16 and bf16 parameters, several chunks each.
  const Tensor master = random_tensor(rng(), {70000}, DType::kF32);
  for (const DType dtype : {DType::kF16, DType::kBF16}) {
    const Tensor param = empty({70000}, {dtype, cuda});
    copy_masters({{to(master, cuda), param}});
    ::ts::testing::expect_equal(to(param, Device::cpu()), ::ts::testing::ref_of(to(master, dtype)),
                                std::string(dtype_name(dtype)));
  }
}

// An f16 model of three parameters and one f32 (batch norm's, its own
// master), stepped by SGD with momentum on the masters.
class MasterWeightsTest : public ::ts::testing::SeededTest {
 protected:
  void SetUp() override {
    for (const Shape& shape : {Shape{4, 3}, Shape{6}, Shape{2, 2}}) {
      initial_.push_back(to(random_tensor(rng(), shape, DType::kF32), DType::kF16));
    }
    initial_.push_back(random_tensor(rng(), {3}, DType::kF32));
    for (int step = 0; step < 6; ++step) {
      std::vector<Tensor> grads;
      for (const Tensor& p : initial_) grads.push_back(to(random_tensor(rng(), p.shape(), DType::kF32), p.dtype()));
      grads_.push_back(std::move(grads));
    }
  }

  struct Run {
    std::vector<std::pair<std::string, Variable>> params;
    std::unique_ptr<MixedPrecision> mp;
    std::unique_ptr<Sgd> sgd;
  };
  Run fresh() const {
    Run r;
    for (size_t i = 0; i < initial_.size(); ++i) {
      r.params.emplace_back("p" + std::to_string(i), Variable(clone(initial_[i]), true));
    }
    r.mp = std::make_unique<MixedPrecision>(r.params, LossScalerOptions{.initial = 1024, .window = 2});
    r.sgd = std::make_unique<Sgd>(r.mp->masters(), SgdOptions{.lr = 0.1, .momentum = 0.9});
    return r;
  }
  // One step with the gradients of `step` times the current scale (what the
  // backward of the scaled loss gives); returns whether it was taken.
  bool step(Run& r, int step, int poisoned = -1, const MixedPrecision::OverflowVote& vote = nullptr) const {
    for (size_t i = 0; i < r.params.size(); ++i) {
      Tensor g = to(to(grads_[step][i], DType::kF32) * r.mp->scaler().scale(), r.params[i].second.dtype());
      if (static_cast<int>(i) == poisoned) copy_(g.view({-1}).narrow(0, 1, 1), scalar_tensor(kInf, {g.dtype()}));
      r.params[i].second.set_grad(g);
    }
    const bool take = value_or_die(r.mp->unscale_gradients(step, vote));
    if (take) {
      r.sgd->step();
      r.mp->copy_masters_to_model();
    }
    for (auto& [name, p] : r.params) p.clear_grad();
    r.sgd->zero_grad();
    return take;
  }
  static std::vector<std::vector<uint8_t>> bits(const NamedTensors& tensors) {
    std::vector<std::vector<uint8_t>> out;
    for (const auto& [name, t] : tensors) {
      const Tensor c = contiguous(to(t, Device::cpu()));
      const auto* b = static_cast<const uint8_t*>(c.raw_data());
      out.emplace_back(b, b + c.numel() * dtype_size(c.dtype()));
    }
    return out;
  }
  static NamedTensors values(const Run& r) {
    NamedTensors out;
    for (const auto& [name, p] : r.params) out.emplace_back(name, clone(p.data()));
    for (const auto& [name, m] : r.mp->masters()) out.emplace_back("master " + name, clone(m.data()));
    return out;
  }

  std::vector<Tensor> initial_;
  std::vector<std::vector<Tensor>> grads_;
};

TEST_F(MasterWeightsTest, MastersAreF32ForF16ParametersOnly) {
  Run r = fresh();
  const auto& masters = r.mp->masters();
  ASSERT_EQ(masters.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(masters[i].second.dtype(), DType::kF32);
    EXPECT_NE(masters[i].second.id(), r.params[i].second.id());
  }
  EXPECT_EQ(masters[3].second.id(), r.params[3].second.id());
  // An update below f16's resolution at 1 reaches the master, not the model.
  const Tensor one = ones({1}, {DType::kF16});
  std::vector<std::pair<std::string, Variable>> tiny = {{"w", Variable(clone(one), true)}};
  MixedPrecision mp(tiny, LossScalerOptions{.initial = 1});
  Sgd sgd(mp.masters(), SgdOptions{.lr = 1e-4});
  for (int i = 0; i < 2; ++i) {
    tiny[0].second.set_grad(ones({1}, {DType::kF16}));
    ASSERT_TRUE(value_or_die(mp.unscale_gradients(i)));
    sgd.step();
    mp.copy_masters_to_model();
  }
  EXPECT_NEAR(item<double>(mp.masters()[0].second.data()), 1 - 2e-4, 1e-7);
  // Below half of f16's spacing under 1 (2^-12): rounds back to 1.
  EXPECT_EQ(item<double>(tiny[0].second.data()), 1.0);
}

// One parameter under two names would get two masters, or be unscaled twice.
TEST(MixedPrecisionTest, AParameterListedTwiceIsAnError) {
  const Variable w(ones({2}, {DType::kF16}), true);
  expect_throws(absl::StatusCode::kInvalidArgument, {"MixedPrecision", "\"tied\"", "listed before"}, [&] {
    MixedPrecision mp({{"w", w}, {"tied", w}}, LossScalerOptions{});
  });
}

// An f16 parameter that is not row-major (a transposed view) is named when
// the masters are made, not after the first step by copy_masters' index.
TEST(MixedPrecisionTest, AParameterNotRowMajorIsNamed) {
  const Variable w(ones({2, 3}, {DType::kF16}).transpose(0, 1), true);
  expect_throws(absl::StatusCode::kInvalidArgument,
                {"MixedPrecision: parameter \"w\" is f16[3, 2] on cpu", "not row-major contiguous"}, [&] {
                  MixedPrecision mp({{"w", w}}, LossScalerOptions{});
                });
}

TEST_F(MasterWeightsTest, AnInfSkipsTheStepAndChangesNothingButTheScale) {
  Run r = fresh();
  ASSERT_TRUE(step(r, 0));  // momentum buffers exist from here
  const auto params_before = bits(values(r)), optimizer_before = bits(r.sgd->state());
  const double scale = r.mp->scaler().scale();
  EXPECT_FALSE(step(r, 1, /*poisoned=*/2));
  EXPECT_EQ(r.mp->scaler().scale(), scale / 2);
  EXPECT_EQ(r.mp->scaler().skipped_steps(), 1);
  EXPECT_EQ(bits(values(r)), params_before);
  EXPECT_EQ(bits(r.sgd->state()), optimizer_before);
  // The next clean step is taken.
  EXPECT_TRUE(step(r, 2));
  EXPECT_NE(bits(values(r)), params_before);
}

TEST_F(MasterWeightsTest, TheRanksVoteOnSkippingAStep) {
  Run r = fresh();
  ASSERT_TRUE(step(r, 0));
  const auto params_before = bits(values(r)), optimizer_before = bits(r.sgd->state());
  const double scale = r.mp->scaler().scale();
  std::vector<bool> heard;
  // Clean here, but another rank overflowed: skipped here too, nothing
  // changed but the scale.
  const MixedPrecision::OverflowVote elsewhere = [&](bool found_here) {
    heard.push_back(found_here);
    return true;
  };
  EXPECT_FALSE(step(r, 1, -1, elsewhere));
  EXPECT_EQ(r.mp->scaler().scale(), scale / 2);
  EXPECT_EQ(bits(values(r)), params_before);
  EXPECT_EQ(bits(r.sgd->state()), optimizer_before);
  // The vote hears this rank's own overflow, and a world that is clean
  // everywhere steps.
  const MixedPrecision::OverflowVote only_here = [&](bool found_here) {
    heard.push_back(found_here);
    return found_here;
  };
  EXPECT_FALSE(step(r, 2, /*poisoned=*/1, only_here));
  EXPECT_TRUE(step(r, 3, -1, only_here));
  EXPECT_EQ(heard, (std::vector<bool>{false, true, false}));
  EXPECT_NE(bits(values(r)), params_before);
}

TEST_F(MasterWeightsTest, TheMinimumScaleErrorSaysWhenTheOverflowWasOnAnotherRank) {
  std::vector<std::pair<std::string, Variable>> params = {{"w", Variable(zeros({2}, {DType::kF16}), true)}};
  MixedPrecision mp(params, LossScalerOptions{.initial = 2, .max = 2, .min = 0.5});
  const MixedPrecision::OverflowVote elsewhere = [](bool) { return true; };
  params[0].second.set_grad(zeros({2}, {DType::kF16}));
  EXPECT_FALSE(value_or_die(mp.unscale_gradients(7, elsewhere)));
  params[0].second.set_grad(zeros({2}, {DType::kF16}));
  expect_error(mp.unscale_gradients(8, elsewhere).status(), absl::StatusCode::kFailedPrecondition,
               {"step 8", "a gradient of another rank is not finite", "minimum 0.5"});
}

// An overflow in the head spreads backward to every layer before it: the
// error names the last registered parameter with a non-finite gradient, the
// nearest to where it began, not the first layer.
TEST_F(MasterWeightsTest, TheMinimumScaleErrorNamesTheStepAndParameter) {
  std::vector<std::pair<std::string, Variable>> params = {{"conv1.weight", Variable(zeros({2}, {DType::kF16}), true)},
                                                          {"fc.weight", Variable(zeros({2}, {DType::kF16}), true)},
                                                          {"fc.bias", Variable(zeros({2}, {DType::kF16}), true)}};
  MixedPrecision mp(params, LossScalerOptions{.initial = 2, .max = 2, .min = 0.5});
  const auto poison = [&] {
    params[0].second.set_grad(full({2}, std::nan(""), {DType::kF16}));
    params[1].second.set_grad(full({2}, std::nan(""), {DType::kF16}));
    params[2].second.set_grad(zeros({2}, {DType::kF16}));
  };
  poison();
  EXPECT_FALSE(value_or_die(mp.unscale_gradients(41)));
  poison();
  expect_error(mp.unscale_gradients(42).status(), absl::StatusCode::kFailedPrecondition,
               {"step 42", "\"fc.weight\" is not finite", "minimum 0.5"});
}

TEST_F(MasterWeightsTest, ResumeFromSavedStateIsBitExact) {
  Run uninterrupted = fresh();
  for (int s = 0; s < 6; ++s) step(uninterrupted, s, s == 3 ? 0 : -1);

  Run first = fresh();
  for (int s = 0; s < 2; ++s) step(first, s);
  const NamedTensors mp_state = first.mp->state(), sgd_state = first.sgd->state();
  NamedTensors model;
  for (const auto& [name, p] : first.params) model.emplace_back(name, clone(p.data()));

  Run resumed = fresh();
  for (size_t i = 0; i < model.size(); ++i) copy_(resumed.params[i].second.data(), model[i].second);
  ASSERT_OK(resumed.mp->load_state(mp_state));
  ASSERT_OK(resumed.sgd->load_state(sgd_state));
  for (int s = 2; s < 6; ++s) step(resumed, s, s == 3 ? 0 : -1);
  EXPECT_EQ(bits(values(resumed)), bits(values(uninterrupted)));
  EXPECT_EQ(bits(resumed.mp->state()), bits(uninterrupted.mp->state()));
  EXPECT_EQ(bits(resumed.sgd->state()), bits(uninterrupted.sgd->state()));

  NamedTensors wrong = mp_state;
  wrong.back().second = zeros({5}, {DType::kF32});
  expect_error(resumed.mp->load_state(wrong), absl::StatusCode::kInvalidArgument, {"master."});
}

}  // namespace
}  // namespace ts::optim
