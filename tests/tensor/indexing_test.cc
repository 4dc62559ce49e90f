// cat, stack, index_select, gather, scatter_add and one_hot against naive
// references, and their errors for bad shapes and out-of-range indices.
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::expect_equal;
using testing::Layout;
using testing::Ref;
using testing::ref_of;

class IndexingTest : public testing::SeededTest {};

// Coordinates of row-major index i in shape.
std::vector<int64_t> coords_of(int64_t i, const Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

TEST_F(IndexingTest, CatAlongEveryDimPromotesAndAcceptsEmptyPieces) {
  for (int64_t dim : {0, 1, 2, -1}) {
    const int64_t d = dim < 0 ? dim + 3 : dim;
    std::vector<Tensor> parts;
    std::vector<Ref> refs;
    const int64_t sizes[] = {2, 0, 3};
    const DType dtypes[] = {DType::kI32, DType::kF32, DType::kF16};
    for (int p = 0; p < 3; ++p) {
      Shape shape = {4, 5, 6};
      shape[d] = sizes[p];
      parts.push_back(
          testing::random_tensor(rng(), shape, dtypes[p], -10, 10, p == 2 ? Layout::kTransposed : Layout::kContiguous));
      refs.push_back(ref_of(parts.back()));
    }
    Tensor y = cat(parts, dim);
    EXPECT_EQ(y.dtype(), DType::kF32);
    Shape out_shape = {4, 5, 6};
    out_shape[d] = 5;
    Ref want{out_shape, std::vector<double>(shape_numel(out_shape))};
    for (int64_t i = 0; i < want.numel(); ++i) {
      std::vector<int64_t> c = coords_of(i, out_shape);
      int p = 0;
      while (c[d] >= sizes[p]) c[d] -= sizes[p++];
      want.v[i] = refs[p].v[refs[p].index(c)];
    }
    expect_equal(y, want, absl::StrCat("cat dim ", dim));
  }
}

TEST_F(IndexingTest, StackAddsADim) {
  const Tensor a = testing::random_tensor(rng(), {3, 2}, DType::kF32);
  const Tensor b = testing::random_tensor(rng(), {3, 2}, DType::kF32, -1, 1, Layout::kTransposed);
  for (int64_t dim : {0, 1, 2, -1}) {
    Tensor y = stack({a, b}, dim);
    const int64_t d = dim < 0 ? dim + 3 : dim;
    Shape shape = {3, 2};
    shape.insert(shape.begin() + d, 2);
    EXPECT_EQ(y.shape(), shape);
    expect_equal(y.select(d, 0), ref_of(a), absl::StrCat("stack dim ", dim, ", first"));
    expect_equal(y.select(d, 1), ref_of(b), absl::StrCat("stack dim ", dim, ", second"));
  }
  const Tensor c = testing::random_tensor(rng(), {2, 3}, DType::kF32);
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"stack", "[2, 3]"}, [&] { stack({a, c}, 0); });
}

TEST_F(IndexingTest, IndexSelectWithRepeatsAlongEveryDim) {
  const Tensor x = testing::random_tensor(rng(), {4, 5, 6}, DType::kBF16, -3, 3, Layout::kStrided);
  const Ref rx = ref_of(x);
  for (int64_t dim : {0, 1, 2}) {
    for (DType index_dtype : {DType::kI64, DType::kI32}) {
      const Tensor index = testing::random_tensor(rng(), {7}, index_dtype, 0, x.shape()[dim]);
      const Ref ri = ref_of(index);
      Tensor y = index_select(x, dim, index);
      Shape shape = x.shape();
      shape[dim] = 7;
      Ref want{shape, std::vector<double>(shape_numel(shape))};
      for (int64_t i = 0; i < want.numel(); ++i) {
        std::vector<int64_t> c = coords_of(i, shape);
        c[dim] = static_cast<int64_t>(ri.v[c[dim]]);
        want.v[i] = rx.v[rx.index(c)];
      }
      expect_equal(y, want, absl::StrCat("index_select dim ", dim));
    }
  }
}

TEST_F(IndexingTest, GatherAndScatterAddAlongEveryDim) {
  const Tensor x = testing::random_tensor(rng(), {4, 5, 6}, DType::kF32, -3, 3, Layout::kTransposed);
  const Ref rx = ref_of(x);
  for (int64_t dim : {0, 1, 2}) {
    // Index smaller than x in the other dims, larger along dim (repeats).
    Shape ishape = {3, 4, 5};
    ishape[dim] = 8;
    const Tensor index = testing::random_tensor(rng(), ishape, DType::kI64, 0, x.shape()[dim]);
    const Ref ri = ref_of(index);
    Tensor g = gather(x, dim, index);
    Ref want_g{ishape, std::vector<double>(shape_numel(ishape))};
    for (int64_t i = 0; i < want_g.numel(); ++i) {
      std::vector<int64_t> c = coords_of(i, ishape);
      c[dim] = static_cast<int64_t>(ri.v[i]);
      want_g.v[i] = rx.v[rx.index(c)];
    }
    expect_equal(g, want_g, absl::StrCat("gather dim ", dim));

    // src larger than index: only the covered part is added.
    Shape sshape = ishape;
    for (auto& s : sshape) s += 1;
    const Tensor src = testing::random_tensor(rng(), sshape, DType::kF32, -2, 2);
    const Ref rs = ref_of(src);
    Tensor y = scatter_add(x, dim, index, src);
    Ref want = rx;
    for (int64_t i = 0; i < shape_numel(ishape); ++i) {
      std::vector<int64_t> c = coords_of(i, ishape);
      const double v = rs.v[rs.index(c)];
      c[dim] = static_cast<int64_t>(ri.v[i]);
      want.v[want.index(c)] += v;
    }
    testing::expect_close(y, want, 1e-5, 1, absl::StrCat("scatter_add dim ", dim));
  }
}

TEST_F(IndexingTest, ScatterAddIntegers) {
  Tensor x = zeros({3}, {DType::kI64});
  Tensor index = from_vector<int64_t>({0, 2, 2, 2, 1}, {5});
  Tensor src = from_vector<int64_t>({1, 10, 100, 1000, 7}, {5});
  Tensor y = scatter_add(x, 0, index, src);
  expect_equal(y, Ref{{3}, {1, 7, 1110}});
}

TEST_F(IndexingTest, ScatterAddOf16BitValuesSumsInF32) {
  // 1000 ones into one bf16 element: summed in bf16 the adds stop at 256;
  // in f32, rounded once, the sum is 1000 (exact in bf16).
  for (const DType dtype : {DType::kBF16, DType::kF16}) {
    Tensor y = scatter_add(zeros({2}, {dtype}), 0, zeros({1000}, {DType::kI64}), ones({1000}, {dtype}));
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_EQ(to_vector<float>(y), (std::vector<float>{1000, 0})) << dtype_name(dtype);
  }
}

TEST_F(IndexingTest, ScatterAddIntoAChannelsLastInput) {
  // Channel 0 of every pixel gets a 1, as PyTorch gives it.
  Tensor x = zeros({1, 2, 2, 2}, {DType::kF32, Device::cpu(), MemoryFormat::kChannelsLast});
  Tensor y = scatter_add(x, 1, zeros({1, 1, 2, 2}, {DType::kI64}), ones({1, 1, 2, 2}));
  expect_equal(y, Ref{{1, 2, 2, 2}, {1, 1, 1, 1, 0, 0, 0, 0}});
  expect_equal(x, Ref{{1, 2, 2, 2}, {0, 0, 0, 0, 0, 0, 0, 0}});
}

TEST_F(IndexingTest, OneHot) {
  Tensor index = from_vector<int32_t>({2, 0, 3, 3}, {2, 2});
  Tensor y = one_hot(index, 4);
  EXPECT_EQ(y.dtype(), DType::kI64);
  expect_equal(y, Ref{{2, 2, 4}, {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1}});
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"one_hot", "index 3"}, [&] { one_hot(index, 3); });
}

TEST_F(IndexingTest, OutOfRangeIndicesAndBadShapesAreErrors) {
  Tensor x = zeros({4, 5});
  Tensor bad = from_vector<int64_t>({0, 4}, {2});
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"index_select", "index 4", "dim 0", "size 4"},
                         [&] { index_select(x, 0, bad); });
  Tensor neg_index = from_vector<int64_t>({-1, 0}, {2, 1});
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"gather", "index -1"}, [&] { gather(x, 1, neg_index); });
  Tensor float_index = zeros({2});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"index_select", "i32 or i64"},
                         [&] { index_select(x, 0, float_index); });
  Tensor wide = zeros({2, 6}, {DType::kI64});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"gather", "[2, 6]"}, [&] { gather(x, 0, wide); });
  Tensor y = zeros({4, 6});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"cat", "[4, 6]", "dim 0"}, [&] { cat({x, y}, 0); });
}

}  // namespace
}  // namespace ts
