// Adam and AdamW against torch.optim: worked examples from torch itself
// (tools/golden/optim_torch.py), then every option combination over three
// steps for each floating dtype against torch's update written out in
// float64; per-parameter step counts, state for an exact resume, the errors
// users meet, and the fused CUDA kernel against the CPU loop (skipped
// without a GPU).
#include "optim/adam.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "tests/optim/resume_testing.h"
#include "tests/optim/rounding_testing.h"
#include "tests/optim/torch_adam_examples.h"
#include "tests/tensor/testing.h"

namespace ts::optim {
namespace {

using autograd::Variable;
using ::ts::testing::expect_close;
using ::ts::testing::expect_error;
using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;
using ::ts::testing::Ref;

std::vector<double> values(const Tensor& t) { return to_vector<double>(t); }

// The parameter after each of three steps, printed by
// tools/golden/optim_torch.py (torch 2.15.0, float64, foreach=False).
TEST(AdamTest, MatchesTorchOnWorkedExamples) {
  for (const TorchAdamExample& example : kTorchAdamExamples) {
    SCOPED_TRACE(example.name);
    const Variable p(from_vector<double>(kTorchAdamStart, {3}), true);
    Adam adam({p}, example.options);
    for (size_t step = 0; step < kTorchAdamGrads.size(); ++step) {
      p.set_grad(from_vector<double>(kTorchAdamGrads[step], {3}));
      adam.step();
      expect_close(p.data(), Ref{{3}, example.after_step[step]}, 1e-14, 1.0, "after step " + std::to_string(step + 1));
    }
  }
}

// torch's _single_tensor_adam on float64 values, in its own words; p and the
// moments are then rounded to the parameter's dtype, as storage does.
struct Reference {
  std::vector<double> p, m, v, v_max;
  int64_t step = 0;

  void take_step(const std::vector<double>& grad, const AdamOptions& o, DType dtype) {
    ++step;
    const double bias_correction1 = 1 - std::pow(o.beta1, step);
    const double bias_correction2 = 1 - std::pow(o.beta2, step);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = grad[i];
      if (o.weight_decay != 0) {
        if (o.decoupled_weight_decay) {
          p[i] *= 1 - o.lr * o.weight_decay;
        } else {
          g += o.weight_decay * p[i];
        }
      }
      m[i] += (1 - o.beta1) * (g - m[i]);
      v[i] = v[i] * o.beta2 + (1 - o.beta2) * g * g;
      v_max[i] = std::max(v_max[i], v[i]);
      const double denom = std::sqrt(o.amsgrad ? v_max[i] : v[i]) / std::sqrt(bias_correction2) + o.eps;
      p[i] -= o.lr / bias_correction1 * m[i] / denom;
    }
    for (std::vector<double>* x : {&p, &m, &v, &v_max}) {
      *x = ::ts::testing::ref_round(Ref{{static_cast<int64_t>(x->size())}, *x}, dtype).v;
    }
  }
};

// One step of _single_tensor_adam in float64 from the optimizer's own state
// (the stored parameter and moments), the parameter's `step`-th, not
// rounded: what storing the results in the parameter's dtype must round.
// `*_scale` add up the magnitudes the step's operations round
// (rounding_testing.h).
struct AdamStep {
  std::vector<double> p, m, v, v_max, p_scale, m_scale, v_scale;
};
AdamStep exact_adam_step(std::vector<double> p, const std::vector<double>& m, const std::vector<double>& v,
                         const std::vector<double>& v_max, const std::vector<double>& grad, const AdamOptions& o,
                         int64_t step) {
  const double bias_correction1 = 1 - std::pow(o.beta1, step);
  const double bias_correction2 = 1 - std::pow(o.beta2, step);
  AdamStep s;
  for (size_t i = 0; i < p.size(); ++i) {
    const double p_old = p[i];
    double g = grad[i], g_scale = std::abs(g);
    if (o.weight_decay != 0) {
      if (o.decoupled_weight_decay) {
        p[i] *= 1 - o.lr * o.weight_decay;
      } else {
        g += o.weight_decay * p[i];
        g_scale += std::abs(o.weight_decay * p[i]);
      }
    }
    const double m_new = m[i] + (1 - o.beta1) * (g - m[i]);
    const double v_new = v[i] * o.beta2 + (1 - o.beta2) * g * g;
    const double v_max_new = std::max(v_max[i], v_new);
    const double denom = std::sqrt(o.amsgrad ? v_max_new : v_new) / std::sqrt(bias_correction2) + o.eps;
    const double step_size = o.lr / bias_correction1;
    const double m_scale = std::abs(m[i]) + g_scale + std::abs(m_new);
    const double p_new = p[i] - step_size * m_new / denom;
    s.p.push_back(p_new);
    s.m.push_back(m_new);
    s.v.push_back(v_new);
    s.v_max.push_back(v_max_new);
    // The update's error: its own roundings, and those of m_new (whose
    // terms may cancel) carried through the division.
    s.p_scale.push_back(std::abs(p_old) + std::abs(p_new) + step_size * (m_scale / denom));
    s.m_scale.push_back(m_scale);
    s.v_scale.push_back(std::abs(v[i]) + g_scale * g_scale + std::abs(v_new));
  }
  return s;
}

std::vector<AdamOptions> every_combination() {
  std::vector<AdamOptions> out;
  for (double weight_decay : {0.0, 0.05}) {
    for (bool decoupled : {false, true}) {
      for (bool amsgrad : {false, true}) {
        if (decoupled && weight_decay == 0) continue;  // the same as coupled
        out.push_back({.lr = 0.05,
                       .beta1 = 0.8,
                       .beta2 = 0.95,
                       .eps = 1e-6,
                       .weight_decay = weight_decay,
                       .amsgrad = amsgrad,
                       .decoupled_weight_decay = decoupled});
      }
    }
  }
  return out;
}

std::string describe(const AdamOptions& o) {
  return absl::StrCat("weight_decay ", o.weight_decay, o.decoupled_weight_decay ? " decoupled" : "",
                      o.amsgrad ? " amsgrad" : "");
}

class AdamReferenceTest : public ::ts::testing::SeededTest {};

// Each step is checked from the optimizer's state before it, so that a
// rounding that went the other way in an earlier step (the float step can
// land a hair across a rounding boundary from the exact one) does not carry
// into the next comparison.
TEST_F(AdamReferenceTest, EveryOptionCombinationMatchesFloat64ForThreeSteps) {
  for (DType dtype : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    for (const AdamOptions& options : every_combination()) {
      SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", describe(options)));
      const std::vector<Shape> shapes = {{3, 4}, {5}};
      std::vector<Variable> params;
      for (const Shape& shape : shapes) params.emplace_back(random_tensor(rng(), shape, dtype), true);
      Adam adam(params, options);
      for (int step = 0; step < 3; ++step) {
        std::map<std::string, Tensor> state;
        for (const auto& [name, t] : adam.state()) state.emplace(name, t);
        // The moments as stored, zero before the first step.
        const auto moment = [&](size_t i, const char* buffer) {
          const std::string name = absl::StrCat("state.0.", i, ".", buffer);
          const auto it = state.find(name);
          EXPECT_EQ(it != state.end(), step > 0) << name;
          return it != state.end() ? values(it->second) : std::vector<double>(shape_numel(shapes[i]));
        };
        std::vector<AdamStep> want;
        for (size_t i = 0; i < params.size(); ++i) {
          const std::vector<double> p = values(params[i].data()), m = moment(i, "exp_avg"), v = moment(i, "exp_avg_sq");
          const std::vector<double> v_max = options.amsgrad ? moment(i, "max_exp_avg_sq") : v;
          params[i].set_grad(random_tensor(rng(), shapes[i], dtype));
          want.push_back(exact_adam_step(p, m, v, v_max, values(params[i].grad()), options, step + 1));
        }
        adam.step();
        state.clear();
        for (const auto& [name, t] : adam.state()) state.emplace(name, t);
        for (size_t i = 0; i < params.size(); ++i) {
          const std::string at = absl::StrCat(i, " after step ", step + 1);
          testing::expect_rounding_of(params[i].data(), want[i].p, want[i].p_scale, "param " + at);
          const auto stored = [&](const char* buffer) {
            const std::string name = absl::StrCat("state.0.", i, ".", buffer);
            EXPECT_EQ(state.count(name), 1u) << name;
            return state.count(name) ? state.at(name) : zeros({0}, {dtype});
          };
          testing::expect_rounding_of(stored("exp_avg"), want[i].m, want[i].m_scale, "exp_avg " + at);
          testing::expect_rounding_of(stored("exp_avg_sq"), want[i].v, want[i].v_scale, "exp_avg_sq " + at);
          if (options.amsgrad) {
            testing::expect_rounding_of(stored("max_exp_avg_sq"), want[i].v_max, want[i].v_scale,
                                        "max_exp_avg_sq " + at);
          }
        }
      }
    }
  }
}

// Bias correction counts each parameter's own steps (torch keeps `step` per
// parameter): one that skipped a step (no gradient) takes its first step as
// a first step.
TEST_F(AdamReferenceTest, ParametersWithoutGradientsKeepTheirOwnStepCount) {
  const AdamOptions options{.lr = 0.1};
  const Variable a(random_tensor(rng(), {4}, DType::kF64), true), b(random_tensor(rng(), {4}, DType::kF64), true);
  Reference ref_a{values(a.data()), std::vector<double>(4), std::vector<double>(4), std::vector<double>(4)};
  Reference ref_b{values(b.data()), std::vector<double>(4), std::vector<double>(4), std::vector<double>(4)};
  Adam adam({a, b}, options);
  for (int step = 0; step < 3; ++step) {
    a.set_grad(random_tensor(rng(), {4}, DType::kF64));
    ref_a.take_step(values(a.grad()), options, DType::kF64);
    if (step > 0) {
      b.set_grad(random_tensor(rng(), {4}, DType::kF64));
      ref_b.take_step(values(b.grad()), options, DType::kF64);
    }
    adam.step();
    adam.zero_grad();
  }
  expect_close(a.data(), Ref{{4}, ref_a.p}, 1e-14, 1.0);
  expect_close(b.data(), Ref{{4}, ref_b.p}, 1e-14, 1.0);
  std::map<std::string, Tensor> state;
  for (auto& [name, t] : adam.state()) state.emplace(name, t);
  EXPECT_EQ(item<int64_t>(state.at("state.0.0.step")), 3);
  EXPECT_EQ(item<int64_t>(state.at("state.0.1.step")), 2);
}

// Saved after two steps and resumed by a fresh optimizer, a run continues
// exactly as the uninterrupted one; entries carry torch's names.
TEST_F(AdamReferenceTest, StateResumesBitForBitAndNamesEveryEntry) {
  const AdamOptions options{.lr = 0.01, .weight_decay = 0.01, .amsgrad = true, .decoupled_weight_decay = true};
  const auto r = testing::run_with_resume<Adam>(options, {3, 2}, rng());
  EXPECT_EQ(to_vector<float>(r.resumed_param.data()), to_vector<float>(r.uninterrupted_param.data()));
  std::map<std::string, Tensor> by_name(r.saved.begin(), r.saved.end());
  EXPECT_EQ(by_name.size(), 5u);
  for (const char* name :
       {"param_groups.0.lr", "state.w.step", "state.w.exp_avg", "state.w.exp_avg_sq", "state.w.max_exp_avg_sq"}) {
    EXPECT_EQ(by_name.count(name), 1u) << name;
  }
  NamedTensors missing;
  for (const auto& entry : r.saved) {
    if (entry.first != "state.w.max_exp_avg_sq") missing.push_back(entry);
  }
  Adam other({{"w", Variable(clone(r.initial), true)}}, options);
  expect_error(other.load_state(missing), absl::StatusCode::kNotFound,
               {"Adam.load_state", "missing", "\"state.w.max_exp_avg_sq\""});
}

// A channels-last parameter keeps each element's moments: its state equals a
// row-major twin's, and a resume from it steps on as the twin does.
TEST_F(AdamReferenceTest, ChannelsLastParameterKeepsEachElementsMoments) {
  const AdamOptions options{.lr = 0.01, .amsgrad = true};
  const Shape shape = {2, 3, 2, 2};
  const Tensor init = random_tensor(rng(), shape, DType::kF64);
  std::vector<Tensor> grads;
  for (int step = 0; step < 3; ++step) grads.push_back(random_tensor(rng(), shape, DType::kF64));
  Variable plain(clone(init), true), nhwc(contiguous(init, MemoryFormat::kChannelsLast), true);
  Adam on_plain({{"w", plain}}, options), on_nhwc({{"w", nhwc}}, options);
  for (int step = 0; step < 2; ++step) {
    plain.set_grad(clone(grads[step]));
    nhwc.set_grad(contiguous(grads[step], MemoryFormat::kChannelsLast));
    on_plain.step();
    on_nhwc.step();
  }
  const NamedTensors plain_state = on_plain.state(), nhwc_state = on_nhwc.state();
  ASSERT_EQ(plain_state.size(), nhwc_state.size());
  for (size_t i = 0; i < plain_state.size(); ++i) {
    EXPECT_EQ(values(nhwc_state[i].second), values(plain_state[i].second)) << nhwc_state[i].first;
  }
  Variable resumed(contiguous(nhwc.data(), MemoryFormat::kChannelsLast), true);
  Adam on_resumed({{"w", resumed}}, options);
  ASSERT_TRUE(on_resumed.load_state(nhwc_state).ok());
  plain.set_grad(clone(grads[2]));
  resumed.set_grad(contiguous(grads[2], MemoryFormat::kChannelsLast));
  on_plain.step();
  on_resumed.step();
  EXPECT_EQ(values(resumed.data()), values(plain.data()));
}

TEST(AdamTest, InvalidOptionsAndGradientsAreErrors) {
  const Variable p(from_vector<double>(std::vector<double>{1, 2}, {2}), true);
  expect_throws(absl::StatusCode::kInvalidArgument, {"Adam: parameter group 0", "beta1", "1"},
                [&] { Adam adam({p}, {.beta1 = 1}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"beta2", "-0.5"}, [&] { Adam adam({p}, {.beta2 = -0.5}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"eps"}, [&] { Adam adam({p}, {.eps = -1}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"Adam: lr", "-1"}, [] { validate(AdamOptions{.lr = -1}); });
  expect_throws(absl::StatusCode::kInvalidArgument, {"\"0.1\"", "more than once"}, [&] { Adam adam({p, p}, {}); });

  const Variable q(from_vector<double>(std::vector<double>{3, 4}, {2}), true);
  Adam adam({{"p", p}, {"q", q}}, {.lr = 0.1});
  p.set_grad(from_vector<double>(std::vector<double>{1, 1}, {2}));
  q.set_grad(from_vector<double>(std::vector<double>{1, 1, 1}, {3}));
  expect_throws(absl::StatusCode::kInvalidArgument, {"Adam.step", "\"q\"", "f64[2]", "f64[3]"}, [&] { adam.step(); });
  EXPECT_EQ(values(p.data()), (std::vector<double>{1, 2}));  // p untouched
  EXPECT_EQ(adam.state().size(), 3u);                        // lr and two step counts, no moments
}

// The fused kernel rounds as the CPU loop does: the same steps on CUDA, in
// one launch or one per tensor, give the CPU's parameters and state bit for
// bit.
TEST_F(AdamReferenceTest, CudaMatchesTheCpuLoopBitForBit) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (bool fused : {true, false}) {
      for (const AdamOptions& options : every_combination()) {
        SCOPED_TRACE(absl::StrCat(dtype_name(dtype), fused ? " fused " : " per tensor ", describe(options)));
        const std::vector<Shape> shapes = {{70000}, {3, 5}, {0}};
        std::vector<Variable> cpu, cuda;
        for (const Shape& shape : shapes) {
          const Tensor init = random_tensor(rng(), shape, dtype);
          cpu.emplace_back(clone(init), true);
          cuda.emplace_back(to(init, Device::cuda(0)), true);
        }
        Adam on_cpu(cpu, options), on_cuda(cuda, options);
        on_cuda.set_fused(fused);
        for (int step = 0; step < 3; ++step) {
          for (size_t i = 0; i < shapes.size(); ++i) {
            const Tensor grad = random_tensor(rng(), shapes[i], dtype);
            cpu[i].set_grad(grad);
            cuda[i].set_grad(to(grad, Device::cuda(0)));
          }
          on_cpu.step();
          on_cuda.step();
        }
        for (size_t i = 0; i < shapes.size(); ++i) {
          EXPECT_EQ(values(to(cuda[i].data(), Device::cpu())), values(cpu[i].data())) << "param " << i;
        }
        // The moments (and amsgrad's maximum) too: a resumed run steps on
        // from them.
        const NamedTensors cpu_state = on_cpu.state(), cuda_state = on_cuda.state();
        ASSERT_EQ(cuda_state.size(), cpu_state.size());
        for (size_t k = 0; k < cpu_state.size(); ++k) {
          EXPECT_EQ(cuda_state[k].first, cpu_state[k].first);
          EXPECT_EQ(values(to(cuda_state[k].second, Device::cpu())), values(cpu_state[k].second)) << cpu_state[k].first;
        }
      }
    }
  }
}

// A 0-dim CUDA parameter's moments are 0-dim tensors too: loaded back, they
// go to the parameter's device (only per-parameter scalars stay on the CPU),
// so the fused step takes them, and steps on from them as the CPU does.
TEST(AdamTest, StateOfAScalarCudaParameterLoadsOnItsDevice) {
  TS_SKIP_WITHOUT_CUDA();
  const Variable p(to(scalar_tensor(1.5, {DType::kF32}), Device::cuda(0)), true);
  Adam adam({{"s", p}}, {.lr = 0.1});
  p.set_grad(to(scalar_tensor(0.5, {DType::kF32}), Device::cuda(0)));
  adam.step();
  Adam resumed({{"s", p}}, {.lr = 0.1});
  ASSERT_OK(resumed.load_state(adam.state()));
  std::map<std::string, Tensor> state;
  for (const auto& [name, t] : resumed.state()) state.emplace(name, t);
  for (const char* name : {"state.s.exp_avg", "state.s.exp_avg_sq"}) {
    ASSERT_EQ(state.count(name), 1u) << name;
    EXPECT_TRUE(state.at(name).device().is_cuda()) << name;
    EXPECT_EQ(state.at(name).dim(), 0) << name;
  }
  ASSERT_NO_THROW(resumed.step());  // the second step, with the same gradient
  // The same two steps on the CPU. A second step from zero moments would
  // leave p 0.025 away, one that counted as the first 0.034.
  const Variable q(scalar_tensor(1.5, {DType::kF32}), true);
  Adam on_cpu({{"s", q}}, {.lr = 0.1});
  for (int step = 0; step < 2; ++step) {
    q.set_grad(scalar_tensor(0.5, {DType::kF32}));
    on_cpu.step();
  }
  const double want = item<float>(q.data());
  EXPECT_NEAR(item<float>(to(p.data(), Device::cpu())), want, 1e-5 * std::abs(want));
}

}  // namespace
}  // namespace ts::optim
