// matmul against a float64 triple loop: vectors, matrices, batches with
// broadcasting, transposed and strided operands, every floating dtype.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "tensor/cuda_gemm.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::expect_close;
using testing::Layout;
using testing::Ref;
using testing::ref_matmul;
using testing::ref_of;
using testing::tolerance;

class MatmulTest : public testing::SeededTest {};

struct ShapeCase {
  Shape a, b;
};

const ShapeCase kShapes[] = {
    {{3, 4}, {4, 5}},       {{1, 1}, {1, 1}},          {{7}, {7}},          {{7}, {7, 3}},          {{3, 7}, {7}},
    {{2, 3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {5, 4, 6}}, {{4, 6}, {3, 6, 2}}, {{65, 129}, {129, 97}}, {{2, 3, 0}, {0, 4}},
    {{0, 3}, {3, 2}},
};

TEST_F(MatmulTest, MatchesReferenceForEveryShapeDtypeAndLayout) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (const ShapeCase& c : kShapes) {
      for (Layout la : {Layout::kContiguous, Layout::kTransposed, Layout::kStrided}) {
        for (Layout lb : {Layout::kContiguous, Layout::kTransposed}) {
          const Tensor a = testing::random_tensor(rng(), c.a, dtype, -1, 1, la);
          const Tensor b = testing::random_tensor(rng(), c.b, dtype, -1, 1, lb);
          Tensor y = matmul(a, b);
          EXPECT_EQ(y.dtype(), dtype);
          auto [want, magnitude] = ref_matmul(ref_of(a), ref_of(b));
          const double floor = magnitude.v.empty() ? 1 : *std::max_element(magnitude.v.begin(), magnitude.v.end());
          expect_close(y, want, tolerance(dtype), std::max(floor, 1e-3),
                       absl::StrCat(dtype_name(dtype), " ", shape_str(c.a), "@", shape_str(c.b), " layouts ",
                                    static_cast<int>(la), static_cast<int>(lb)));
        }
      }
    }
  }
}

// 16-bit products sum in f32: 4096 terms of about 1/3 total about 1365, where
// an f16 sum stalls at 1024 (its spacing there is 1) and a bf16 one at 128.
// Within the standard's 1e-2 of the f64 sum only with f32 accumulation; the
// test above, on random signs, has error bounds too loose to tell.
TEST_F(MatmulTest, SixteenBitProductsSumInF32) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    const Tensor a = full({4, 4096}, 1, {dtype});
    const Tensor b = full({4096, 3}, 1.0 / 3, {dtype});
    auto [want, magnitude] = ref_matmul(ref_of(a), ref_of(b));
    expect_close(matmul(a, b), want, tolerance(dtype), 1, std::string(dtype_name(dtype)));
  }
}

TEST_F(MatmulTest, ExpandedBatchOperand) {
  const Tensor w = testing::random_tensor(rng(), {1, 5, 3}, DType::kF32);
  Tensor shared = w.expand({4, 5, 3});
  const Tensor x = testing::random_tensor(rng(), {4, 2, 5}, DType::kF32);
  Tensor y = matmul(x, shared);
  auto [want, magnitude] = ref_matmul(ref_of(x), testing::ref_expand(ref_of(w), {4, 5, 3}));
  expect_close(y, want, tolerance(DType::kF32), 1);
}

TEST_F(MatmulTest, BadOperandsAreErrors) {
  Tensor a = zeros({2, 3});
  Tensor b = zeros({4, 5});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"matmul", "[2, 3]", "[4, 5]", "3 != 4"},
                         [&] { matmul(a, b); });
  Tensor h = zeros({3, 5}, {DType::kF16});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"matmul", "f32", "f16"}, [&] { matmul(a, h); });
  Tensor i = zeros({3, 5}, {DType::kI32});
  Tensor i2 = zeros({2, 3}, {DType::kI32});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"matmul", "floating"}, [&] { matmul(i2, i); });
  Tensor s = zeros({});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"matmul", "at least one dim"}, [&] { matmul(s, a); });
  Tensor x = zeros({2, 2, 3});
  Tensor y = zeros({3, 3, 4});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"matmul", "broadcastable"}, [&] { matmul(x, y); });
}

// TS_CUBLASLT's values (which library runs CUDA products, tensor/cuda_gemm.h;
// the CUDA tests check that each runs where it should): anything else is an
// error naming the variable and its value.
TEST(CudaGemmLibraryTest, ParsesTsCublasLt) {
  EXPECT_EQ(parse_cuda_gemm_library("1").value(), CudaGemmLibrary::kCublasLt);
  EXPECT_EQ(parse_cuda_gemm_library("strict").value(), CudaGemmLibrary::kCublasLtStrict);
  EXPECT_EQ(parse_cuda_gemm_library("0").value(), CudaGemmLibrary::kCublas);
  for (const char* bad : {"", "off", "2", "Strict"}) {
    const absl::StatusOr<CudaGemmLibrary> parsed = parse_cuda_gemm_library(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find(absl::StrCat("TS_CUBLASLT=", bad, ":")), std::string::npos)
        << parsed.status();
  }
}

}  // namespace
}  // namespace ts
