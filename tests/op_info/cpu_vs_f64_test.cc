// Every OpInfo entry on the CPU against its float64 reference: every dtype,
// sample and layout (contiguous, transposed, strided; each input's own layout
// too), an expanded operand, inputs holding NaNs, and the result's dtype.
// The inputs' rounding to the dtype is part of the inputs; the op's own error
// is what testing::tolerance(dtype) bounds. Also: every row of
// tensor/op_table.h has an entry.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tensor/op_table.h"
#include "tests/op_info/op_info.h"
#include "tests/tensor/testing.h"

namespace ts::testing {
namespace {

constexpr Layout kLayouts[] = {Layout::kContiguous, Layout::kTransposed, Layout::kStrided};

class CpuVsF64Test : public OpInfoTest {
 protected:
  // Runs the op on `inputs` and compares with the reference: exactly for
  // integer and bool results, else within the entry's tolerance.
  void check(const Sample& sample, DType dtype, const SampleInputs& inputs, const std::string& extra = "") {
    const std::string what = describe(info(), sample, dtype, &inputs, extra);
    SCOPED_TRACE(what);
    const Tensor y = run(info(), inputs, inputs.tensors);
    EXPECT_EQ(y.dtype(), info().result_dtype(dtype));
    EXPECT_TRUE(y.device().is_cpu());
    const Ref want = reference(info(), inputs);
    if (!is_floating(y.dtype())) {
      expect_equal(y, want, what);
      return;
    }
    double floor = info().floor;
    if (info().magnitude) {
      for (double m : info().magnitude(inputs.refs()).v) floor = std::max(floor, m);
    }
    expect_close(y, want, info().tolerance_for(y.dtype()), floor, what);
  }
};

std::string layout_name(Layout layout) {
  switch (layout) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kTransposed:
      return "transposed";
    case Layout::kStrided:
      return "strided";
  }
  return "?";
}

TEST_P(CpuVsF64Test, EveryDtypeSampleAndLayout) {
  for (DType dtype : info().dtypes) {
    for (const Sample& sample : info().samples) {
      for (Layout layout : kLayouts) {
        if (sample.size == SampleSize::kLarge && layout != Layout::kContiguous) continue;
        check(sample, dtype, make_inputs(rng(), info(), sample, dtype, layout), layout_name(layout));
      }
    }
  }
}

TS_INSTANTIATE_OP_INFO_SUITE(CpuVsF64Test, nullptr);

// The samples whose inputs can each take every layout: two inputs or more,
// all of two dims or more (a transposed layout needs two).
bool all_layouts_apply(const Sample& sample) {
  return sample.size != SampleSize::kLarge && sample.shapes.size() >= 2 &&
         std::all_of(sample.shapes.begin(), sample.shapes.end(), [](const Shape& s) { return s.size() >= 2; });
}
bool has_multi_input_sample(const OpInfo& info) {
  return std::any_of(info.samples.begin(), info.samples.end(), all_layouts_apply);
}

class CpuVsF64MultiInputTest : public CpuVsF64Test {};

// Each input in its own layout: every combination, on the samples with two
// inputs or more, all of two dims or more (single-input entries have their
// input in each layout in EveryDtypeSampleAndLayout).
TEST_P(CpuVsF64MultiInputTest, InputsInDifferentLayouts) {
  int samples = 0;
  for (const Sample& sample : info().samples) {
    if (!all_layouts_apply(sample)) continue;
    ++samples;
    const size_t n = sample.shapes.size();
    int combinations = 1;
    for (size_t i = 0; i < n; ++i) combinations *= 3;
    for (int c = 0; c < combinations; ++c) {
      std::vector<Layout> layouts;
      std::string names;
      for (int rest = c, i = 0; i < static_cast<int>(n); ++i, rest /= 3) {
        layouts.push_back(kLayouts[rest % 3]);
        absl::StrAppend(&names, i ? "," : "", layout_name(layouts.back()));
      }
      check(sample, DType::kF32, make_inputs(rng(), info(), sample, DType::kF32, layouts), names);
    }
  }
  EXPECT_GT(samples, 0) << "instantiated for an entry without a multi-input sample";
}

TS_INSTANTIATE_OP_INFO_SUITE(CpuVsF64MultiInputTest, has_multi_input_sample);

class CpuVsF64BinaryTest : public CpuVsF64Test {};

// A broadcast operand given as an expanded view (stride 0) rather than by
// its shape.
TEST_P(CpuVsF64BinaryTest, ExpandedOperand) {
  const Sample sample{{Shape{1, 9}, Shape{17, 9}}};
  for (DType dtype : info().dtypes) {
    SampleInputs inputs =
        make_inputs(rng(), info(), sample, dtype, std::vector<Layout>{Layout::kContiguous, Layout::kTransposed});
    inputs.tensors[0] = inputs.tensors[0].expand({17, 9});
    check(Sample{{Shape{17, 9}, Shape{17, 9}}}, dtype, inputs, "first operand expanded from [1, 9]");
  }
}

TS_INSTANTIATE_OP_INFO_SUITE(CpuVsF64BinaryTest, is_binary_elementwise);

class CpuVsF64ElementwiseTest : public CpuVsF64Test {};

// NaN in, NaN out (or the predicate's answer for NaN), operand by operand.
TEST_P(CpuVsF64ElementwiseTest, InputsHoldingNans) {
  for (DType dtype : info().dtypes) {
    if (!is_floating(dtype)) continue;
    for (const Sample& sample : info().samples) {
      if (sample.size == SampleSize::kLarge) continue;
      for (size_t k = 0; k < sample.shapes.size(); ++k) {
        SampleInputs inputs = make_inputs(rng(), info(), sample, dtype, Layout::kTransposed);
        std::vector<double> values = to_vector<double>(inputs.tensors[k]);
        for (size_t i = 0; i < values.size(); i += 3) values[i] = NAN;
        copy_(inputs.tensors[k], from_vector<double>(values, inputs.tensors[k].shape()));
        check(sample, dtype, inputs, absl::StrCat("NaNs in input ", k));
      }
    }
  }
}

TS_INSTANTIATE_OP_INFO_SUITE(CpuVsF64ElementwiseTest, is_elementwise);

// A row of tensor/op_table.h needs an entry (its reference and domains in
// op_info.cc) before its op is tested; this fails until it has one.
TEST(OpInfoTableTest, EveryRowOfTheOpTableHasAnEntry) {
  struct RowName {
    const char* name;
    std::optional<UnaryOp> unary;
    std::optional<BinaryOp> binary;
    bool predicate;
  };
#define TS_UNARY_ROW_NAME(name, Functor, rule) \
  RowName{#name, UnaryOp::k##Functor, std::nullopt, DTypeRule::rule == DTypeRule::kPredicate},
#define TS_BINARY_ROW_NAME(name, Functor, rule) \
  RowName{#name, std::nullopt, BinaryOp::k##Functor, DTypeRule::rule == DTypeRule::kPredicate},
  const RowName rows[] = {TS_UNARY_OPS(TS_UNARY_ROW_NAME) TS_BINARY_OPS(TS_BINARY_ROW_NAME)};
#undef TS_UNARY_ROW_NAME
#undef TS_BINARY_ROW_NAME
  for (const RowName& row : rows) {
    const OpInfo* info = find_op_info(row.name);
    if (info == nullptr) {
      ADD_FAILURE() << "row \"" << row.name << "\" of tensor/op_table.h has no OpInfo entry: add its float64 "
                    << "reference, input domains and composed gradient to row_specs() in tests/op_info/op_info.cc";
      continue;
    }
    EXPECT_EQ(info->unary_op, row.unary) << row.name;
    EXPECT_EQ(info->binary_op, row.binary) << row.name;
    EXPECT_EQ(info->differentiable(), !row.predicate) << row.name;
    EXPECT_EQ(static_cast<bool>(info->composed_grad), !row.predicate) << row.name;
  }
}

}  // namespace
}  // namespace ts::testing
