// embedding against a float64 row lookup on fresh random tables and indices
// (repeated indices, 0-D to 3-D index shapes, i32 and i64), the padding row's
// missing gradient, gradcheck, errors naming the bad input, and CUDA against
// CPU.
#include <cstdint>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/gradcheck.h"
#include "gtest/gtest.h"
#include "nn/functional.h"
#include "tensor/ops.h"
#include "tests/nn/functional/layer_testing.h"
#include "tests/tensor/testing.h"

namespace ts::nn::functional {
namespace {

using autograd::Variable;
using ::ts::testing::random_tensor;
using ::ts::testing::Ref;
using ::ts::testing::ref_of;

class EmbeddingTest : public ts::testing::SeededTest {
 protected:
  // Indices in [0, rows) of `shape`, with repeats when there are more than rows.
  Tensor random_ids(Dims shape, int64_t rows, DType dtype) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<int64_t> values(n);
    std::uniform_int_distribution<int64_t> pick(0, rows - 1);
    for (int64_t& v : values) v = pick(rng());
    return to(from_vector<int64_t>(values, shape), dtype);
  }
};

TEST_F(EmbeddingTest, ForwardIsTheRowsAtTheIndices) {
  const std::vector<Shape> id_shapes = {{}, {7}, {3, 5}, {2, 3, 4}};
  for (const DType dtype : {DType::kF32, DType::kF64}) {
    for (const DType id_dtype : {DType::kI32, DType::kI64}) {
      for (const Shape& shape : id_shapes) {
        SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", dtype_name(id_dtype), " ids of rank ", shape.size()));
        const Tensor weight = random_tensor(rng(), {11, 6}, dtype);
        const Tensor ids = random_ids(shape, 11, id_dtype);
        const Tensor out = embedding(ids, Variable(weight)).data();
        Shape want_shape = shape;
        want_shape.push_back(6);
        ASSERT_EQ(out.shape(), want_shape);
        const Ref w = ref_of(weight), got = ref_of(out), id = ref_of(ids);
        for (int64_t i = 0; i < id.numel(); ++i) {
          for (int64_t j = 0; j < 6; ++j) {
            EXPECT_EQ(got.v[i * 6 + j], w.v[static_cast<int64_t>(id.v[i]) * 6 + j]);
          }
        }
      }
    }
  }
}

// The weight gradient is each row's sum of the output gradients of the
// positions that looked it up, except the padding row's, which is 0.
TEST_F(EmbeddingTest, GradientSumsRepeatedRowsAndSkipsPadding) {
  for (const int64_t padding : {kNoPadding, int64_t{2}, int64_t{-1}}) {
    SCOPED_TRACE(absl::StrCat("padding_idx ", padding));
    const Variable weight(random_tensor(rng(), {5, 3}, DType::kF64), true);
    const Tensor ids = random_ids({4, 6}, 5, DType::kI64);
    const Tensor grad_out = random_tensor(rng(), {4, 6, 3}, DType::kF64);
    embedding(ids, weight, padding).backward(grad_out);
    const int64_t skipped = padding == kNoPadding ? -1 : (padding + 5) % 5;
    std::vector<double> want(15, 0.0);
    const Ref id = ref_of(ids), g = ref_of(grad_out);
    for (int64_t i = 0; i < 24; ++i) {
      const auto row = static_cast<int64_t>(id.v[i]);
      if (row == skipped) continue;
      for (int64_t j = 0; j < 3; ++j) want[row * 3 + j] += g.v[i * 3 + j];
    }
    ts::testing::expect_close(weight.grad(), Ref{{5, 3}, want}, 1e-12);
  }
}

// Without padding: the padding row's gradient is 0 by definition, not the
// derivative (the explicit test above covers it).
TEST_F(EmbeddingTest, Gradcheck) {
  const Tensor ids = random_ids({3, 4}, 6, DType::kI32);
  EXPECT_OK(autograd::gradcheck([&](const std::vector<Variable>& v) { return embedding(ids, v[0]); },
                                {random_tensor(rng(), {6, 2}, DType::kF64)}));
}

TEST_F(EmbeddingTest, BadInputsAreErrorsNamingThem) {
  const Variable weight(random_tensor(rng(), {4, 3}, DType::kF32));
  ts::testing::expect_throws(absl::StatusCode::kOutOfRange, {"embedding", "index 4", "size 4"}, [&] {
    embedding(from_vector<int64_t>({0, 4, 1}, {3}), weight);
  });
  ts::testing::expect_throws(absl::StatusCode::kOutOfRange, {"embedding", "index -1"},
                             [&] { embedding(from_vector<int64_t>({-1}, {1}), weight); });
  ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"embedding", "i32 or i64", "f32[2]"},
                             [&] { embedding(ones({2}), weight); });
  ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"embedding", "2-D", "f32[4]"},
                             [&] { embedding(from_vector<int64_t>({0}, {1}), Variable(ones({4}))); });
  ts::testing::expect_throws(absl::StatusCode::kInvalidArgument, {"embedding", "padding_idx 4"},
                             [&] { embedding(from_vector<int64_t>({0}, {1}), weight, 4); });
}

// f16 and bf16 on the CPU against float64 on the same values: the forward
// (a gather) exactly, the weight gradient (sums of the rounded output
// gradients, in the weight's dtype) within 1e-2 of its largest magnitude.
TEST_F(EmbeddingTest, ReducedFloatsOnCpuMatchFloat64) {
  const Tensor ids = random_ids({8, 5}, 9, DType::kI64);
  for (const DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor weight = random_tensor(rng(), {9, 4}, dtype);
    ts::testing::expect_equal(embedding(ids, Variable(weight)).data(),
                              ref_of(embedding(ids, Variable(to(weight, DType::kF64))).data()), "forward");
    nn::testing::expect_matches_f64([&](const std::vector<Variable>& v) { return embedding(ids, v[0], 0); }, {weight},
                                    random_tensor(rng(), {8, 5, 4}, DType::kF64), dtype, Device::cpu(),
                                    ts::testing::tolerance(dtype));
  }
}

// The forward (a gather) gives the CPU's rows bit for bit; the weight
// gradient (scatter_add without atomics, in the CPU's order) is compared
// with float64 as the CPU's is above.
TEST_F(EmbeddingTest, CudaMatchesCpu) {
  TS_SKIP_WITHOUT_CUDA();
  const Tensor ids = random_ids({8, 5}, 9, DType::kI64);
  for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor weight = random_tensor(rng(), {9, 4}, dtype);
    ts::testing::expect_equal(embedding(to(ids, Device::cuda(0)), Variable(to(weight, Device::cuda(0)))).data(),
                              ref_of(embedding(ids, Variable(weight)).data()), "forward");
    const Tensor grad_out = random_tensor(rng(), {8, 5, 4}, DType::kF64);
    nn::testing::expect_cuda_matches_cpu(
        [&](const std::vector<Variable>& v) { return embedding(to(ids, v[0].device()), v[0], 0); }, {weight}, grad_out,
        dtype,
        dtype == DType::kF64      ? 1e-12
        : is_reduced_float(dtype) ? ts::testing::tolerance(dtype)
                                  : 1e-6);
  }
}

}  // namespace
}  // namespace ts::nn::functional
