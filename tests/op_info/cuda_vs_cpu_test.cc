// Every OpInfo entry on CUDA against the same op on the CPU (which
// cpu_vs_f64_test checks against float64), on the same inputs: every dtype,
// sample and layout, each GPU input placed inside a larger storage at an
// offset, so the strided, offset and unaligned paths of the kernels run. Also
// the elementwise rows at sizes that reach the vectorized and grid-stride
// paths, and the fused gradient kernels. Each test skips, with the reason, on
// machines without a usable GPU.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/op_info/op_info.h"
#include "tests/tensor/testing.h"

namespace ts::testing {
namespace {

constexpr Layout kLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kStrided};
// Elements in front of each GPU input: its start is not aligned for vector
// loads of any dtype.
constexpr int64_t kOffset = 3;

std::vector<Tensor> on_gpu(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(to_device_keeping_layout(t, Device::cuda(0), kOffset));
  return out;
}

class CudaVsCpuTest : public OpInfoTest {
 protected:
  void check(const Sample& sample, DType dtype, const SampleInputs& inputs, const std::string& extra = "") {
    const std::string what = describe(info(), sample, dtype, &inputs, extra);
    SCOPED_TRACE(what);
    const Tensor cpu_result = run(info(), inputs, inputs.tensors);
    const Tensor gpu_result = run(info(), inputs, on_gpu(inputs.tensors));
    EXPECT_TRUE(gpu_result.device().is_cuda());
    // Sums of many terms (the entries with a magnitude) are compared relative
    // to their largest output: the devices add in different orders.
    expect_close_to_cpu(gpu_result, cpu_result, static_cast<bool>(info().magnitude), what);
  }
};

TEST_P(CudaVsCpuTest, EveryDtypeSampleAndLayout) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType dtype : info().dtypes) {
    for (const Sample& sample : info().samples) {
      for (Layout layout : kLayouts) {
        if (sample.size == SampleSize::kLarge && layout != Layout::kContiguous) continue;
        check(sample, dtype, make_inputs(rng(), info(), sample, dtype, layout),
              absl::StrCat("layout ", static_cast<int>(layout)));
      }
    }
  }
}

TS_INSTANTIATE_OP_INFO_SUITE(CudaVsCpuTest, nullptr);

class CudaVsCpuElementwiseTest : public CudaVsCpuTest {};

// 2^20 + 1 elements: the vectorized path with a ragged tail, and grid-stride
// loops, in every dtype (each has its own vector width).
TEST_P(CudaVsCpuElementwiseTest, LargeSizes) {
  TS_SKIP_WITHOUT_CUDA();
  const Shape shape = {(1 << 20) + 1};
  std::vector<Sample> samples;
  if (info().unary_op) {
    samples = {Sample{{shape}}};
  } else {
    samples = {Sample{{shape, shape}}, Sample{{shape}, 0}, Sample{{shape}, 1}};
  }
  for (DType dtype : info().dtypes) {
    for (const Sample& sample : samples) check(sample, dtype, make_inputs(rng(), info(), sample, dtype));
  }
}

TS_INSTANTIATE_OP_INFO_SUITE(CudaVsCpuElementwiseTest, is_elementwise);

class CudaVsCpuFusedGradientTest : public CudaVsCpuTest {};

TEST_P(CudaVsCpuFusedGradientTest, EqualsCpu) {
  TS_SKIP_WITHOUT_CUDA();
  const GradReads reads = info().unary_op ? grad_reads(*info().unary_op) : grad_reads(*info().binary_op);
  // grad(op) at (g, inputs, y), on the device of the tensors given.
  const auto fused = [&](const SampleInputs& inputs, const std::vector<Tensor>& tensors, int k, const Tensor& grad,
                         const Tensor& y) {
    if (info().unary_op) {
      return unary_grad(*info().unary_op, grad, reads.input ? tensors[0] : Tensor(), reads.output ? y : Tensor());
    }
    const std::vector<Operand> operands = inputs.operands(tensors);
    return binary_grad(*info().binary_op, k, grad, operands[0], operands[1], reads.output ? y : Tensor());
  };
  for (DType dtype : info().dtypes) {
    if (!is_floating(dtype)) continue;  // integer inputs have no gradient
    for (const Sample& sample : info().samples) {
      for (Layout layout : {Layout::kContiguous, Layout::kTransposed}) {
        if (sample.size == SampleSize::kLarge && layout != Layout::kContiguous) continue;
        const SampleInputs inputs = make_inputs(rng(), info(), sample, dtype, layout);
        const Tensor y = run(info(), inputs, inputs.tensors);
        const Tensor grad = random_tensor(rng(), y.shape(), y.dtype(), -1, 1, layout);
        const std::vector<Tensor> gpu_inputs = on_gpu(inputs.tensors);
        const Tensor gpu_y = to_device_keeping_layout(y, Device::cuda(0), kOffset);
        const Tensor gpu_grad = to_device_keeping_layout(grad, Device::cuda(0), kOffset);
        for (int k = 0; k < (info().unary_op ? 1 : 2); ++k) {
          if (k == sample.scalar_operand) continue;
          const std::string what =
              describe(info(), sample, dtype, &inputs,
                       absl::StrCat("gradient of operand ", k, ", layout ", static_cast<int>(layout)));
          SCOPED_TRACE(what);
          const Tensor cpu_result = fused(inputs, inputs.tensors, k, grad, y);
          const Tensor gpu_result = fused(inputs, gpu_inputs, k, gpu_grad, gpu_y);
          EXPECT_TRUE(gpu_result.device().is_cuda());
          expect_close_to_cpu(gpu_result, cpu_result, false, what);
        }
      }
    }
  }
}

TS_INSTANTIATE_OP_INFO_SUITE(CudaVsCpuFusedGradientTest, is_differentiable_elementwise);

}  // namespace
}  // namespace ts::testing
