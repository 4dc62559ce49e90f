// matmul against a float64 triple loop: vectors, matrices, batches with
// broadcasting, transposed and strided operands, every floating dtype.
#include <cmath>

#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::expect_close;
using testing::Layout;
using testing::Ref;
using testing::ref_of;
using testing::tolerance;

// torch.matmul on references. Returns the product and, per element, the sum
// of |a||b| (what bounds the rounding error of any summation order).
std::pair<Ref, Ref> ref_matmul(Ref a, Ref b) {
  const bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
  if (a_vec) a.shape.insert(a.shape.begin(), 1);
  if (b_vec) b.shape.push_back(1);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  const Shape batch = testing::value_or_die(broadcast_shapes(
      "ref", Dims(a.shape).subspan(0, a.shape.size() - 2), Dims(b.shape).subspan(0, b.shape.size() - 2)));
  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  const Ref ea = testing::ref_expand(a, a_full), eb = testing::ref_expand(b, b_full);
  Shape out_shape = batch;
  if (!a_vec) out_shape.push_back(m);
  if (!b_vec) out_shape.push_back(n);
  const int64_t nb = shape_numel(batch);
  Ref out{out_shape, std::vector<double>(nb * m * n)}, mag = out;
  for (int64_t bi = 0; bi < nb; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, s_abs = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = ea.v[(bi * m + i) * k + p] * eb.v[(bi * k + p) * n + j];
          s += x;
          s_abs += std::abs(x);
        }
        out.v[(bi * m + i) * n + j] = s;
        mag.v[(bi * m + i) * n + j] = s_abs;
      }
    }
  }
  return {out, mag};
}

class MatmulTest : public testing::SeededTest {};

struct ShapeCase {
  Shape a, b;
};

const ShapeCase kShapes[] = {
    {{3, 4}, {4, 5}},         {{1, 1}, {1, 1}},          {{7}, {7}},
    {{7}, {7, 3}},            {{3, 7}, {7}},             {{2, 3, 4}, {2, 4, 5}},
    {{2, 1, 3, 4}, {5, 4, 6}}, {{4, 6}, {3, 6, 2}},      {{65, 129}, {129, 97}},
    {{2, 3, 0}, {0, 4}},      {{0, 3}, {3, 2}},
};

TEST_F(MatmulTest, MatchesReferenceForEveryShapeDtypeAndLayout) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (const ShapeCase& c : kShapes) {
      for (Layout la : {Layout::kContiguous, Layout::kTransposed, Layout::kStrided}) {
        for (Layout lb : {Layout::kContiguous, Layout::kTransposed}) {
          const Tensor a = testing::random_tensor(rng(), c.a, dtype, -1, 1, la);
          const Tensor b = testing::random_tensor(rng(), c.b, dtype, -1, 1, lb);
          ASSERT_OK_AND_ASSIGN(Tensor y, matmul(a, b));
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

TEST_F(MatmulTest, ExpandedBatchOperand) {
  const Tensor w = testing::random_tensor(rng(), {1, 5, 3}, DType::kF32);
  ASSERT_OK_AND_ASSIGN(Tensor shared, w.expand({4, 5, 3}));
  const Tensor x = testing::random_tensor(rng(), {4, 2, 5}, DType::kF32);
  ASSERT_OK_AND_ASSIGN(Tensor y, matmul(x, shared));
  auto [want, magnitude] = ref_matmul(ref_of(x), testing::ref_expand(ref_of(w), {4, 5, 3}));
  expect_close(y, want, tolerance(DType::kF32), 1);
}

TEST_F(MatmulTest, BadOperandsAreErrors) {
  ASSERT_OK_AND_ASSIGN(Tensor a, zeros({2, 3}));
  ASSERT_OK_AND_ASSIGN(Tensor b, zeros({4, 5}));
  testing::expect_error(matmul(a, b).status(), absl::StatusCode::kInvalidArgument,
                        {"matmul", "[2, 3]", "[4, 5]", "3 != 4"});
  ASSERT_OK_AND_ASSIGN(Tensor h, zeros({3, 5}, {DType::kF16}));
  testing::expect_error(matmul(a, h).status(), absl::StatusCode::kInvalidArgument, {"matmul", "f32", "f16"});
  ASSERT_OK_AND_ASSIGN(Tensor i, zeros({3, 5}, {DType::kI32}));
  ASSERT_OK_AND_ASSIGN(Tensor i2, zeros({2, 3}, {DType::kI32}));
  testing::expect_error(matmul(i2, i).status(), absl::StatusCode::kInvalidArgument, {"matmul", "floating"});
  ASSERT_OK_AND_ASSIGN(Tensor s, zeros({}));
  testing::expect_error(matmul(s, a).status(), absl::StatusCode::kInvalidArgument, {"matmul", "at least one dim"});
  ASSERT_OK_AND_ASSIGN(Tensor x, zeros({2, 2, 3}));
  ASSERT_OK_AND_ASSIGN(Tensor y, zeros({3, 3, 4}));
  testing::expect_error(matmul(x, y).status(), absl::StatusCode::kInvalidArgument, {"matmul", "broadcastable"});
}

}  // namespace
}  // namespace ts
