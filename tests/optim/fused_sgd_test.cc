// The fused CUDA SGD step against the CPU loop: bit-for-bit equal for every
// floating dtype and option combination (both round each multiply and add
// once), fused and per-tensor launches alike, tensors spanning many chunks.
// Needs a GPU; skips visibly without one, except the argument checks, which
// fail before touching the device.
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "optim/cuda/fused_sgd.h"
#include "optim/sgd.h"
#include "tests/tensor/testing.h"

namespace ts::optim {
namespace {

using autograd::Variable;
using ::ts::testing::expect_throws;
using ::ts::testing::random_tensor;

// Sizes around the kernel's 16384-element chunks, an empty tensor, a scalar.
const std::vector<Shape> kShapes = {{2 * 16384 + 5}, {16384}, {64, 16, 3, 3}, {0}, {1}};

std::vector<SgdOptions> option_cases() {
  return {{.lr = 0.1},
          {.lr = 0.1, .momentum = 0.9, .dampening = 0.2, .weight_decay = 1e-2},
          {.lr = 0.05, .momentum = 0.9, .weight_decay = 1e-4, .nesterov = true}};
}

std::vector<double> values(const Tensor& t) { return to_vector<double>(t); }

class FusedSgdTest : public ::ts::testing::SeededTest {
 protected:
  // Runs three steps of the same parameters and gradients on the CPU and on
  // CUDA (fused or per tensor) and expects identical bits.
  void compare(DType dtype, const SgdOptions& options, bool fused) {
    SCOPED_TRACE(std::string(dtype_name(dtype)) + (fused ? " fused" : " per tensor") + " momentum " +
                 std::to_string(options.momentum) + (options.nesterov ? " nesterov" : ""));
    std::vector<Variable> cpu, gpu;
    for (const Shape& shape : kShapes) {
      Tensor init = random_tensor(rng(), shape, dtype);
      cpu.emplace_back(init, true);
      gpu.emplace_back(to(init, Device::cuda(0)), true);
    }
    Sgd cpu_sgd(cpu, options);
    Sgd gpu_sgd(gpu, options);
    gpu_sgd.set_fused(fused);
    for (int step = 0; step < 3; ++step) {
      for (size_t i = 0; i < kShapes.size(); ++i) {
        Tensor grad = random_tensor(rng(), kShapes[i], dtype);
        cpu[i].set_grad(grad);
        gpu[i].set_grad(to(grad, Device::cuda(0)));
      }
      cpu_sgd.step();
      gpu_sgd.step();
    }
    for (size_t i = 0; i < kShapes.size(); ++i) {
      EXPECT_EQ(values(gpu[i].data()), values(cpu[i].data())) << "parameter " << i;
    }
    const NamedTensors cpu_state = cpu_sgd.state();
    const NamedTensors gpu_state = gpu_sgd.state();
    ASSERT_EQ(cpu_state.size(), gpu_state.size());
    for (size_t i = 0; i < cpu_state.size(); ++i) {
      EXPECT_EQ(values(gpu_state[i].second), values(cpu_state[i].second)) << cpu_state[i].first;
    }
  }
};

TEST_F(FusedSgdTest, MatchesTheCpuLoopBitForBit) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (const SgdOptions& options : option_cases()) {
      compare(dtype, options, /*fused=*/true);
    }
  }
}

TEST_F(FusedSgdTest, PerTensorLaunchesMatchToo) {
  TS_SKIP_WITHOUT_CUDA();
  compare(DType::kF32, option_cases()[2], /*fused=*/false);
}

TEST_F(FusedSgdTest, OneOptimizerOverCpuAndCudaParameters) {
  TS_SKIP_WITHOUT_CUDA();
  const SgdOptions options = option_cases()[1];
  Tensor a = random_tensor(rng(), {5, 5}, DType::kF32), b = random_tensor(rng(), {7}, DType::kF32);
  Variable cpu_a(a, true), cpu_b(b, true);
  Variable mixed_a(clone(a), true), mixed_b(to(b, Device::cuda(0)), true);
  Sgd reference({cpu_a, cpu_b}, options);
  Sgd mixed({mixed_a, mixed_b}, options);
  for (int step = 0; step < 2; ++step) {
    Tensor ga = random_tensor(rng(), {5, 5}, DType::kF32), gb = random_tensor(rng(), {7}, DType::kF32);
    cpu_a.set_grad(ga);
    cpu_b.set_grad(gb);
    mixed_a.set_grad(ga);
    mixed_b.set_grad(to(gb, Device::cuda(0)));
    reference.step();
    mixed.step();
  }
  EXPECT_EQ(values(mixed_a.data()), values(cpu_a.data()));
  EXPECT_EQ(values(mixed_b.data()), values(cpu_b.data()));
}

TEST_F(FusedSgdTest, StateSavedOnTheCpuResumesOnCuda) {
  TS_SKIP_WITHOUT_CUDA();
  const SgdOptions options = option_cases()[2];
  Tensor init = random_tensor(rng(), {300}, DType::kF32);
  std::vector<Tensor> grads;
  for (int step = 0; step < 4; ++step) grads.push_back(random_tensor(rng(), {300}, DType::kF32));
  Variable cpu(init, true);
  Sgd cpu_sgd({{"w", cpu}}, options);
  for (int step = 0; step < 2; ++step) {
    cpu.set_grad(grads[step]);
    cpu_sgd.step();
  }
  const NamedTensors saved = cpu_sgd.state();
  Variable gpu(to(cpu.data(), Device::cuda(0)), true);
  Sgd gpu_sgd({{"w", gpu}}, options);
  ASSERT_OK(gpu_sgd.load_state(saved));
  for (int step = 2; step < 4; ++step) {
    cpu.set_grad(grads[step]);
    gpu.set_grad(to(grads[step], Device::cuda(0)));
    cpu_sgd.step();
    gpu_sgd.step();
  }
  EXPECT_EQ(values(gpu.data()), values(cpu.data()));
}

TEST_F(FusedSgdTest, MixedDtypesInOneLaunchAreAnError) {
  TS_SKIP_WITHOUT_CUDA();
  const Tensor f32 = zeros({4}, {DType::kF32, Device::cuda(0)});
  const Tensor f16 = zeros({4}, {DType::kF16, Device::cuda(0)});
  const std::vector<SgdUpdate> updates = {{f32, f32, Tensor(), false, {}}, {f16, f16, Tensor(), false, {}}};
  expect_throws(absl::StatusCode::kInvalidArgument,
                {"fused_sgd_step", "update 1", "f16[4] on cuda:0", "one device and dtype"},
                [&] { cuda::fused_sgd_step(updates); });
}

TEST(FusedSgdArgumentsTest, CpuTensorsAndMissingBuffersAreErrors) {
  const Tensor p = zeros({4});
  expect_throws(absl::StatusCode::kInvalidArgument, {"update 0", "not on CUDA"}, [&] {
    cuda::fused_sgd_step(std::vector<SgdUpdate>{{p, p, Tensor(), false, {}}});
  });
  EXPECT_NO_THROW(cuda::fused_sgd_step({}));
}

}  // namespace
}  // namespace ts::optim
