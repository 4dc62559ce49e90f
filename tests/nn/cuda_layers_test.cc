// Every layer and loss on CUDA against the CPU: the same module moved with
// to(), the same input; outputs, input gradients, parameter gradients and
// batch norm's running statistics must agree, also for a convolution on a
// nearly full device. Skips without a GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/ops.h"
#include "gtest/gtest.h"
#include "nn/batch_norm.h"
#include "nn/conv.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/functional.h"
#include "nn/linear.h"
#include "nn/losses.h"
#include "nn/pooling.h"
#include "nn/relu.h"
#include "tensor/cuda/caching_allocator.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::nn {
namespace {

using ::ts::testing::random_tensor;
using ::ts::testing::ref_of;

// f32 on both sides; cuDNN and cuBLAS sum in other orders than the CPU.
constexpr double kTol = 1e-4;

struct Run {
  Tensor out, input_grad;
  NamedTensors state, param_grads;  // on the CPU
};

// M has `Variable forward(const Variable&)`.
template <typename M>
Run run(M& m, const Tensor& x_cpu, Device device) {
  m.to(device);
  m.zero_grad();
  Variable input(to(x_cpu, device), true);
  Variable y = m.forward(input);
  // A non-uniform output gradient, the same on both devices.
  y.backward(sin(reshape(arange(0, static_cast<double>(y.numel()), 1, {y.dtype(), device}), y.shape())));
  Run r;
  r.out = to(y.data(), Device::cpu());
  r.input_grad = to(input.grad(), Device::cpu());
  for (const auto& [name, t] : m.state_dict()) r.state.emplace_back(name, clone(to(t, Device::cpu())));
  for (const auto& [name, p] : m.named_parameters()) {
    r.param_grads.emplace_back(name, to(p.grad(), Device::cpu()));
  }
  return r;
}

// Outputs and gradients are sums of many terms, which cuDNN and the CPU add
// in different orders: an element that cancels to near zero keeps the
// summands' absolute error, so each tensor is compared relative to its
// largest element.
void expect_close_normwise(const Tensor& got, const Tensor& want, const std::string& what) {
  const ts::testing::Ref ref = ref_of(want);
  double largest = 1e-3;
  for (double v : ref.v) largest = std::max(largest, std::abs(v));
  ts::testing::expect_close(got, ref, kTol, largest, what);
}

// Runs `m` on the CPU, restores its state, runs it on CUDA, compares.
template <typename M>
void expect_cuda_matches_cpu(M& m, const Tensor& x) {
  SCOPED_TRACE(m.type_name());
  const NamedTensors initial = [&] {
    NamedTensors copy;
    for (const auto& [name, t] : m.state_dict()) copy.emplace_back(name, clone(t));
    return copy;
  }();
  const uint64_t seed = 1234;
  manual_seed(seed);
  const Run cpu = run(m, x, Device::cpu());
  ASSERT_OK(m.load_state_dict(initial));
  manual_seed(seed);
  const Run gpu = run(m, x, Device::cuda(0));
  expect_close_normwise(gpu.out, cpu.out, "output");
  expect_close_normwise(gpu.input_grad, cpu.input_grad, "input grad");
  for (size_t i = 0; i < cpu.param_grads.size(); ++i) {
    expect_close_normwise(gpu.param_grads[i].second, cpu.param_grads[i].second, cpu.param_grads[i].first + " grad");
  }
  for (size_t i = 0; i < cpu.state.size(); ++i) {
    ts::testing::expect_close(gpu.state[i].second, ref_of(cpu.state[i].second), kTol, 1e-3, cpu.state[i].first);
  }
  m.to(Device::cpu());
}

class CudaLayersTest : public ts::testing::SeededTest {
 protected:
  void SetUp() override { TS_SKIP_WITHOUT_CUDA(); }
  Tensor images(Dims shape) { return random_tensor(rng(), shape, DType::kF32, -2, 2); }
};

TEST_F(CudaLayersTest, Linear) {
  Linear linear(37, 19);
  expect_cuda_matches_cpu(linear, images({8, 37}));
}

TEST_F(CudaLayersTest, Conv2d) {
  functional::Conv2dOptions options;
  options.stride = {2, 2};
  options.padding = {1, 1};
  Conv2d conv(8, 16, {3, 3}, options);
  expect_cuda_matches_cpu(conv, images({4, 8, 15, 15}));
  options.groups = 4;
  Conv2d grouped(8, 16, {3, 3}, options, false);
  expect_cuda_matches_cpu(grouped, images({2, 8, 9, 9}));
}

// With the device nearly full, the convolution's algorithm search times the
// candidates in the largest workspace there is room for, and each call runs
// the fastest algorithm whose workspace it can get, instead of failing (a
// 5x5 convolution's FFT candidates ask for more than is left here).
TEST_F(CudaLayersTest, Conv2dOnANearlyFullDevice) {
  functional::Conv2dOptions options;
  options.padding = {2, 2};
  Conv2d conv(32, 32, {5, 5}, options);
  const Tensor x = images({16, 32, 64, 64});  // 8 MiB, as are the output and each gradient
  // First with room, on a batch of 15: CUDA loads kernels lazily, each
  // module's first launch taking device memory, and inside cuDNN a failed
  // load reads as an execution failure, not the shortage this test is
  // about. The batch of 16 below is another shape, searched afresh.
  expect_cuda_matches_cpu(conv, images({15, 32, 64, 64}));
  ts::cuda::caching_allocator(0).empty_cache();
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  // Room for the run's tensors (about 64 MiB) and little more.
  constexpr size_t kLeft = size_t{96} << 20;
  ASSERT_GT(free_bytes, kLeft);
  void* hog = nullptr;
  ASSERT_EQ(cudaMalloc(&hog, free_bytes - kLeft), cudaSuccess);
  const std::unique_ptr<void, cudaError_t (*)(void*)> release(hog, &cudaFree);
  expect_cuda_matches_cpu(conv, x);
}

TEST_F(CudaLayersTest, BatchNorm2dTrainAndEval) {
  BatchNorm2d bn(6);
  expect_cuda_matches_cpu(bn, images({4, 6, 5, 5}));
  bn.eval();
  expect_cuda_matches_cpu(bn, images({4, 6, 5, 5}));
}

// cuDNN indexes its tensors in 32 bits: past INT_MAX elements (here 2^31 +
// 2^16 f16 values, 4 GiB) batch norm is an error naming the shape, never a
// wrapped stride.
TEST_F(CudaLayersTest, BatchNormPastCudnnIndexingIsAnError) {
  const Variable x(zeros({32769, 1, 256, 256}, {DType::kF16, Device::cuda(0)}));
  ts::testing::expect_throws(
      absl::StatusCode::kInvalidArgument, {"cuDNN", "[32769, 1, 65536, 1]", "split the batch"},
      [&] { functional::batch_norm(x, Tensor(), Tensor(), Variable(), Variable(), true, 0.1, 1e-5); });
}

TEST_F(CudaLayersTest, PoolingReluFlatten) {
  MaxPool2d max_pool({{3, 3}, {2, 2}, {1, 1}});
  expect_cuda_matches_cpu(max_pool, images({2, 3, 9, 9}));
  AvgPool2d avg_pool({{2, 2}, {2, 2}});
  expect_cuda_matches_cpu(avg_pool, images({2, 3, 8, 8}));
  AdaptiveAvgPool2d adaptive({3, 2});
  expect_cuda_matches_cpu(adaptive, images({2, 3, 7, 5}));
  ReLU relu;
  expect_cuda_matches_cpu(relu, images({2, 3, 4, 4}));
  Flatten flatten;
  expect_cuda_matches_cpu(flatten, images({2, 3, 4, 4}));
}

TEST_F(CudaLayersTest, DropoutDrawsTheSameMask) {
  // The generator gives the same numbers on both devices for one seed.
  Dropout dropout(0.3);
  expect_cuda_matches_cpu(dropout, images({4, 1000}));
}

// Every floating dtype of logits: the loss (f32 for 16-bit logits, which
// both devices compute in f32) within its dtype's tolerance, the gradient
// (in the logits' dtype) within that dtype's, relative to its largest
// element.
TEST_F(CudaLayersTest, Losses) {
  std::vector<int64_t> t(16);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int64_t>((i * 7) % 10);
  const Tensor target = from_vector<int64_t>(t, {16});
  using LossFn = std::function<Variable(const Variable&, const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, LossFn>> losses = {
      {"cross_entropy",
       [](auto& x, auto& t, auto&) {
         return cross_entropy(x, t, {.reduction = Reduction::kMean, .label_smoothing = 0.1});
       }},
      {"bce_with_logits", [](auto& x, auto&, auto& b) { return binary_cross_entropy_with_logits(x, b); }},
  };
  for (const DType dtype : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    const Tensor logits = to(images({16, 10}), dtype);
    const Tensor binary = to(gt(images({16, 10}), 0), dtype);
    for (const auto& [name, fn] : losses) {
      SCOPED_TRACE(absl::StrCat(name, " ", dtype_name(dtype)));
      std::vector<Tensor> values, grads;
      for (Device d : {Device::cpu(), Device::cuda(0)}) {
        Variable x(to(logits, d), true);
        Variable loss = fn(x, to(target, d), to(binary, d));
        loss.backward();
        values.push_back(to(loss.data(), Device::cpu()));
        grads.push_back(to(x.grad(), Device::cpu()));
      }
      EXPECT_EQ(values[0].dtype(), dtype == DType::kF64 ? DType::kF64 : DType::kF32);
      EXPECT_EQ(grads[0].dtype(), dtype);
      ts::testing::expect_close_to_cpu(values[1], values[0], /*normwise=*/false, "loss");
      ts::testing::expect_close_to_cpu(grads[1], grads[0], /*normwise=*/true, "gradient");
    }
  }
  // f32 logits: no ties for the two devices to break differently.
  const Tensor logits = images({16, 10});
  const Tensor logits_gpu = to(logits, Device::cuda(0));
  const Tensor target_gpu = to(target, Device::cuda(0));
  for (int64_t k : {1, 3, 5}) {
    EXPECT_EQ(item<int64_t>(topk_correct(logits_gpu, target_gpu, k)), item<int64_t>(topk_correct(logits, target, k)))
        << "top-" << k;
  }
}

}  // namespace
}  // namespace ts::nn
