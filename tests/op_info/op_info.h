// The OpInfo table (PyTorch's OpInfo): one entry per op that says how to call
// it on Tensors and on autograd Variables, its float64 reference, the domain
// of its inputs, the shapes and dtypes to try and the tolerances to allow. One
// table drives three tests: the CPU against float64 (cpu_vs_f64_test), CUDA
// against the CPU (cuda_vs_cpu_test) and gradcheck with the fused gradient
// kernels (gradcheck_test).
//
// The elementwise entries are generated from the rows of tensor/op_table.h:
// the calls, dtypes and shapes come from the row and its dtype rule; op_info.cc
// adds by hand only what a row cannot say (its reference, input domains and
// the gradient composed of separate ops). A new row without those fails
// cpu_vs_f64_test's completeness check.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "autograd/variable.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::testing {

// Where an input's values come from.
struct Domain {
  double lo = -1;
  double hi = 1;
  // Points where the op is not differentiable (relu's 0, floor's integers):
  // floating values keep kKinkGap away from them, so that gradcheck's central
  // differences never straddle one.
  std::vector<double> kinks = {};
  // Whole numbers only, so that comparisons see ties.
  bool whole = false;
  // The input's dtype whatever the dtype under test (a where's condition, a
  // mask).
  std::optional<DType> dtype = std::nullopt;
};
inline constexpr double kKinkGap = 0.05;

// How big a sample is, which decides the tests that run it.
enum class SampleSize {
  kSmall,   // every test, gradcheck included
  kMedium,  // not gradcheck (its element-by-element Jacobian would be slow,
            // or the sample is empty)
  kLarge,   // past every block and vector-width boundary: contiguous only
};

// One way to call the op: the shapes of its tensor inputs, in order. For a
// binary elementwise op, `scalar_operand` 0 or 1 passes that operand as a
// Scalar instead (and `shapes` holds the other one's shape only).
struct Sample {
  std::vector<Shape> shapes;
  int scalar_operand = -1;
  SampleSize size = SampleSize::kSmall;
};

using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;
using VariableFn = std::function<autograd::Variable(const std::vector<autograd::Variable>&)>;
// Binary elementwise ops with operand `scalar_operand` (0 or 1) a Scalar.
using TensorScalarFn = std::function<Tensor(const Tensor&, const Scalar&, int scalar_operand)>;
using VariableScalarFn =
    std::function<autograd::Variable(const autograd::Variable&, const Scalar&, int scalar_operand)>;
// Float64 references: one Ref per operand (a Scalar operand is a 0-dim Ref).
using RefFn = std::function<Ref(const std::vector<Ref>&)>;
// The gradient of an elementwise op composed of separate tensor ops, the way
// it was computed before the fused kernels: from the incoming gradient, the
// operands (a Scalar operand as a 0-dim tensor) and the op's output, one
// gradient per operand at the output's (broadcast) shape.
using ComposedGradFn =
    std::function<std::vector<Tensor>(const Tensor& grad, const std::vector<Tensor>& inputs, const Tensor& output)>;

struct OpInfo {
  std::string name;
  TensorFn op;
  // Binary elementwise rows only.
  TensorScalarFn op_with_scalar;
  // The differentiable form; empty for predicates.
  VariableFn variable_op;
  VariableScalarFn variable_op_with_scalar;
  RefFn reference;
  std::vector<Domain> domains;  // one per operand
  std::vector<Sample> samples;
  std::vector<DType> dtypes;  // of the (non-fixed) inputs
  // The result's dtype for inputs of dtype d.
  std::function<DType(DType)> result_dtype;

  // Elementwise rows: the row's enum (for the fused gradient kernels
  // ts::unary_grad / ts::binary_grad) and its composed gradient.
  std::optional<UnaryOp> unary_op;
  std::optional<BinaryOp> binary_op;
  ComposedGradFn composed_grad;

  // Floating results must satisfy |got - want| <= tol * max(|want|, floor),
  // tol being testing::tolerance(dtype) unless overridden here.
  std::map<DType, double> tolerance_overrides = {};
  double floor = 1e-3;
  // For sums of many terms: the float64 sum of the terms' magnitudes, whose
  // largest value then is the floor (it bounds the rounding error of any
  // summation order).
  RefFn magnitude;

  bool differentiable() const { return static_cast<bool>(variable_op); }
  bool elementwise() const { return unary_op.has_value() || binary_op.has_value(); }
  double tolerance_for(DType result) const;
};

// Every entry: the rows of tensor/op_table.h, then the other ops.
const std::vector<OpInfo>& op_infos();
// The entry of that name, or null.
const OpInfo* find_op_info(absl::string_view name);
// The names of the entries `which` selects (every entry without it), in
// order: the parameters of the tests (entry names are identifiers, as gtest
// wants for parameter names). A suite that applies to some entries only is
// instantiated over those, rather than skipping the others.
std::vector<std::string> op_info_names(bool (*which)(const OpInfo&) = nullptr);
inline bool is_differentiable(const OpInfo& info) { return info.differentiable(); }
inline bool is_elementwise(const OpInfo& info) { return info.elementwise(); }
inline bool is_binary_elementwise(const OpInfo& info) { return info.binary_op.has_value(); }
inline bool is_differentiable_elementwise(const OpInfo& info) { return info.elementwise() && info.differentiable(); }

// A test over one entry: the parameter is its name.
class OpInfoTest : public SeededTest, public ::testing::WithParamInterface<std::string> {
 protected:
  const OpInfo& info() const { return *find_op_info(GetParam()); }
};

// Instantiates `suite` over the entries `which` selects, named by entry.
#define TS_INSTANTIATE_OP_INFO_SUITE(suite, which)                                   \
  INSTANTIATE_TEST_SUITE_P(OpInfo, suite, ::testing::ValuesIn(op_info_names(which)), \
                           [](const ::testing::TestParamInfo<std::string>& param) { return param.param; })

// The inputs of one call: the tensors (on the CPU, in `layout`) and the
// Scalar of a scalar sample.
struct SampleInputs {
  std::vector<Tensor> tensors;
  std::optional<Scalar> scalar;
  int scalar_operand = -1;

  // Every operand in order: `on_device` (these tensors, on any device) with
  // the Scalar put in its place, for the fused gradient kernels.
  std::vector<Operand> operands(const std::vector<Tensor>& on_device) const;
  // Every operand in float64, a Scalar as a 0-dim tensor: what composed
  // gradients take.
  std::vector<Tensor> operands_f64() const;
  // Every operand as a float64 reference.
  std::vector<Ref> refs() const;
};

// Fresh random inputs for `sample` from each operand's domain: `dtype` for
// every input whose domain fixes none. Integer inputs are whole numbers in
// [ceil(lo), hi) (non-negative for u8); a Scalar operand is a multiple of 1/8
// (exact in every floating dtype), integral for integer and bool dtypes.
SampleInputs make_inputs(std::mt19937_64& rng, const OpInfo& info, const Sample& sample, DType dtype,
                         Layout layout = Layout::kContiguous);
// The same inputs with every layout chosen per input.
SampleInputs make_inputs(std::mt19937_64& rng, const OpInfo& info, const Sample& sample, DType dtype,
                         const std::vector<Layout>& layouts);

// Calls the op (on whatever device the tensors are).
Tensor run(const OpInfo& info, const SampleInputs& inputs, const std::vector<Tensor>& tensors);
// Its differentiable form, for gradcheck: the Variables stand for `inputs`'
// tensors.
autograd::Variable run_variable(const OpInfo& info, const SampleInputs& inputs,
                                const std::vector<autograd::Variable>& variables);
// The float64 reference of the op on `inputs`.
Ref reference(const OpInfo& info, const SampleInputs& inputs);

// "add f16 [2, 3] x scalar 1.5, <extra>": names one call in failure
// messages (the Scalar's value when `inputs` is given).
std::string describe(const OpInfo& info, const Sample& sample, DType dtype, const SampleInputs* inputs = nullptr,
                     const std::string& extra = "");

}  // namespace ts::testing
