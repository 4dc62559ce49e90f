// The backward of every differentiable OpInfo entry: gradcheck (central
// differences in float64) on fresh random inputs of every small sample,
// broadcasting shapes and Scalar operands included; and, for every
// elementwise row, the fused gradient kernel (ts::unary_grad /
// ts::binary_grad) against the gradient composed of separate ops that it
// replaces, in float64 and in each floating dtype.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/gradcheck.h"
#include "gtest/gtest.h"
#include "tests/op_info/op_info.h"
#include "tests/tensor/testing.h"

namespace ts::testing {
namespace {

constexpr Layout kLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kStrided};

class GradcheckTest : public OpInfoTest {};
class FusedGradientTest : public OpInfoTest {};

TEST_P(GradcheckTest, BackwardMatchesCentralDifferences) {
  for (const Sample& sample : info().samples) {
    if (sample.size != SampleSize::kSmall) continue;
    const SampleInputs inputs = make_inputs(rng(), info(), sample, DType::kF64);
    SCOPED_TRACE(describe(info(), sample, DType::kF64, &inputs));
    EXPECT_OK(autograd::gradcheck(
        [&](const std::vector<autograd::Variable>& v) { return run_variable(info(), inputs, v); }, inputs.tensors));
  }
}

// The fused kernel reads only what grad_reads() says it needs (as autograd
// calls it); the composed gradient gets every operand and the output.
TEST_P(FusedGradientTest, EqualsTheComposedOne) {
  const GradReads reads = info().unary_op ? grad_reads(*info().unary_op) : grad_reads(*info().binary_op);
  for (DType dtype : info().dtypes) {
    if (!is_floating(dtype)) continue;  // integer inputs have no gradient
    for (const Sample& sample : info().samples) {
      if (sample.size == SampleSize::kLarge) continue;
      for (Layout layout : kLayouts) {
        const SampleInputs inputs = make_inputs(rng(), info(), sample, dtype, layout);
        const Tensor y = run(info(), inputs, inputs.tensors);
        const Tensor grad = random_tensor(rng(), y.shape(), y.dtype(), -1, 1, layout);
        const std::vector<Tensor> composed =
            info().composed_grad(to(grad, DType::kF64), inputs.operands_f64(), to(y, DType::kF64));
        const std::vector<Operand> operands = inputs.operands(inputs.tensors);
        for (int k = 0; k < static_cast<int>(operands.size()); ++k) {
          if (operands[k].is_scalar()) continue;
          const std::string what =
              describe(info(), sample, dtype, &inputs,
                       absl::StrCat("gradient of operand ", k, ", layout ", static_cast<int>(layout)));
          SCOPED_TRACE(what);
          const Tensor fused =
              info().unary_op
                  ? unary_grad(*info().unary_op, grad, reads.input ? inputs.tensors[0] : Tensor(),
                               reads.output ? y : Tensor())
                  : binary_grad(*info().binary_op, k, grad, operands[0], operands[1], reads.output ? y : Tensor());
          EXPECT_EQ(fused.dtype(), y.dtype());
          // Compared relative to max(|g|, 1): the two orders of evaluation
          // differ by rounding errors of the terms, which are of order 1
          // even where the derivative cancels to near 0 (silu near -1.28).
          expect_close(fused, ref_of(composed.at(k)), tolerance(dtype), 1, what);
        }
      }
    }
  }
}

TS_INSTANTIATE_OP_INFO_SUITE(GradcheckTest, is_differentiable);
TS_INSTANTIATE_OP_INFO_SUITE(FusedGradientTest, is_differentiable_elementwise);

}  // namespace
}  // namespace ts::testing
