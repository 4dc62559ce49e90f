// Tensor metadata and views: shapes, strides, sharing of storage, and the
// errors of impossible views.
#include "tensor/cpu_allocator.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::expect_equal;
using testing::Ref;
using testing::ref_of;

Tensor iota(Dims shape) { return arange(0, static_cast<double>(shape_numel(shape)), 1, {DType::kF32}).view(shape); }

TEST(TensorTest, AllocateGivesContiguousRowMajorLayout) {
  Tensor t = empty({2, 3, 4}, {DType::kF16});
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.itemsize(), 2);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.describe(), "f16[2, 3, 4] on cpu");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  Tensor s = empty({});
  EXPECT_EQ(s.numel(), 1);
  EXPECT_FALSE(Tensor().defined());
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"negative", "[2, -1]"}, [&] { empty({2, -1}); });
  // 4 * (2^62 + 1) bytes would wrap to 4.
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"allocate", "f32[4611686018427387905]"},
                         [&] { empty({(int64_t{1} << 62) + 1}); });
}

TEST(TensorTest, ViewsShareStorage) {
  const Tensor x = iota({4, 6});
  Tensor t = x.transpose(0, 1);
  Tensor row = x.select(0, 2);
  Tensor cols = x.slice(1, 1, 5, 2);
  for (const Tensor* v : {&t, &row, &cols}) EXPECT_TRUE(v->shares_storage_with(x));
  fill_(row, -1);
  const float at = item<float>(x.select(0, 2).select(0, 3));
  EXPECT_EQ(at, -1);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(cols.shape(), (Shape{4, 2}));
  EXPECT_EQ(cols.strides(), (Shape{6, 2}));
}

TEST(TensorTest, EmptyTensorsAreContiguousWhateverTheirStrides) {
  Tensor x = zeros({4, 3});
  Tensor none = x.slice(1, 1, 1);  // [4, 0] with strides [3, 1]
  EXPECT_EQ(none.numel(), 0);
  EXPECT_TRUE(none.is_contiguous());
  Tensor transposed = none.transpose(0, 1);
  EXPECT_TRUE(transposed.is_contiguous());
}

TEST(TensorTest, SliceClampsLikePythonAndNarrowChecks) {
  const Tensor x = iota({10});
  Tensor a = x.slice(0, -3, 100);
  expect_equal(a, Ref{{3}, {7, 8, 9}});
  Tensor b = x.slice(0, 8, 2);
  EXPECT_EQ(b.numel(), 0);
  Tensor c = x.slice(0, 1, 8, 3);
  expect_equal(c, Ref{{3}, {1, 4, 7}});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"slice", "step"}, [&] { x.slice(0, 0, 5, 0); });
  Tensor n = x.narrow(0, -4, 2);
  expect_equal(n, Ref{{2}, {6, 7}});
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"narrow", "[10]"}, [&] { x.narrow(0, 8, 3); });
  // start + length past int64 wrapped, and the narrow passed as empty.
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"narrow: start 5 and length 9223372036854775807"},
                         [&] { x.narrow(0, 5, std::numeric_limits<int64_t>::max()); });
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"select", "index 10"}, [&] { x.select(0, 10); });
}

TEST(TensorTest, ViewAndReshape) {
  const Tensor x = iota({2, 3, 4});
  Tensor v = x.view({6, -1});
  EXPECT_EQ(v.shape(), (Shape{6, 4}));
  EXPECT_TRUE(v.shares_storage_with(x));
  // Merging dims 1 and 2 of a transposed tensor needs a copy.
  Tensor t = x.transpose(1, 2);
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"view", "reshape"}, [&] { t.view({2, 12}); });
  Tensor r = reshape(t, {2, 12});
  EXPECT_FALSE(r.shares_storage_with(x));
  const Ref rt = ref_of(t);
  expect_equal(r, Ref{{2, 12}, rt.v});
  // Splitting a dim of a transposed tensor is still a view.
  Tensor split = t.view({2, 2, 2, 3});
  EXPECT_TRUE(split.shares_storage_with(x));
  expect_equal(split, Ref{{2, 2, 2, 3}, rt.v});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"view", "[5, -1]"}, [&] { x.view({5, -1}); });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"more than one -1"}, [&] { x.view({-1, -1}); });
  Tensor f = flatten(x, 1);
  EXPECT_EQ(f.shape(), (Shape{2, 12}));
}

// Shapes whose element count passes int64: the wrapped count matched the
// source's, and the view reached outside its storage (PyTorch: "integer
// multiplication overflow").
TEST(TensorTest, ShapesPastInt64AreErrors) {
  const int64_t wraps_to_8 = 7905747460161236408;  // x 7 is 8 modulo 2^64
  testing::expect_throws(absl::StatusCode::kInvalidArgument,
                         {"view: shape [7905747460161236408, 7] has more elements than an int64 can count"}, [&] {
                           iota({8}).view({wraps_to_8, 7});
                         });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"more elements than an int64 can count"}, [&] {
    scalar_tensor(1.0).view({7, 7905747460161236407});
  });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"more elements than an int64 can count"}, [&] {
    ones({1, 1}).expand({3, 6148914691236517206});
  });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"more elements than an int64 can count"}, [&] {
    empty({0, 3}).view({int64_t{1} << 32, int64_t{1} << 32});
  });
  // A zero anywhere makes an empty tensor, however large the other sizes.
  EXPECT_EQ(empty({0, 3}).view({0, int64_t{1} << 62, 4}).numel(), 0);
  EXPECT_EQ(empty({0, 3}).view({int64_t{1} << 62, 4, 0}).numel(), 0);
}

TEST(TensorTest, PermuteExpandSqueezeUnsqueeze) {
  const Tensor x = iota({2, 1, 3});
  Tensor p = x.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{3, 2, 1}));
  EXPECT_EQ(p.strides(), (Shape{1, 3, 3}));
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"permute", "repeats"}, [&] { x.permute({0, 0, 1}); });
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"permute"}, [&] { x.permute({0, 1}); });
  // A 0-dim tensor's only dims are 0 and -1, as in PyTorch.
  EXPECT_EQ(scalar_tensor(2.0).transpose(0, -1).dim(), 0);
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"transpose: dims 0 and 5 of a 0-dim tensor"},
                         [&] { scalar_tensor(2.0).transpose(0, 5); });
  Tensor e = x.expand({4, 2, 5, 3});
  EXPECT_EQ(e.strides(), (Shape{0, 3, 0, 1}));
  Tensor e2 = x.expand({-1, 2, -1});
  EXPECT_EQ(e2.shape(), (Shape{2, 2, 3}));
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"expand", "[3, 1, 3]"}, [&] { x.expand({3, 1, 3}); });
  EXPECT_EQ(x.squeeze().shape(), (Shape{2, 3}));
  Tensor s0 = x.squeeze(0);
  EXPECT_EQ(s0.shape(), (Shape{2, 1, 3}));
  Tensor s1 = x.squeeze(-2);
  EXPECT_EQ(s1.shape(), (Shape{2, 3}));
  Tensor u = x.unsqueeze(-1);
  EXPECT_EQ(u.shape(), (Shape{2, 1, 3, 1}));
  EXPECT_TRUE(u.is_contiguous());
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"unsqueeze", "dim 5"}, [&] { x.unsqueeze(5); });
}

TEST(TensorTest, CopyIntoViewsConvertsAndBroadcasts) {
  Tensor x = zeros({3, 4}, {DType::kI32});
  Tensor col = x.select(1, 2);
  Tensor src = from_vector<double>({1.9, -2.9, 3.5}, {3});
  copy_(col, src);
  expect_equal(x, Ref{{3, 4}, {0, 0, 1, 0, 0, 0, -2, 0, 0, 0, 3, 0}});
  Tensor row = from_vector<float>({7, 8, 9, 10}, {4});
  copy_(x, row);  // broadcast over rows
  expect_equal(x, Ref{{3, 4}, {7, 8, 9, 10, 7, 8, 9, 10, 7, 8, 9, 10}});
  Tensor expanded = row.expand({2, 4});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"copy_", "expanded"}, [&] { copy_(expanded, row); });
  Tensor wrong = zeros({5});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"copy_", "[5]", "[3, 4]"}, [&] { copy_(x, wrong); });
}

TEST(TensorTest, CopyBetweenPartlySharedMemoryIsAnError) {
  // x[1:] = x[:-1] would read elements it already wrote (PyTorch refuses it).
  Tensor x = from_vector<float>({0, 1, 2, 3, 4, 5}, {6});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"copy_", "share part of their memory"},
                         [&] { copy_(x.slice(0, 1, 6), x.slice(0, 0, 5)); });
  // The same elements, and views that do not meet or interleave, are fine.
  copy_(x, x);
  copy_(x.slice(0, 3, 6), x.slice(0, 0, 3));
  Tensor m = from_vector<float>({0, 1, 2, 3}, {2, 2});
  copy_(m.select(1, 0), m.select(1, 1));
  expect_equal(x, Ref{{6}, {0, 1, 2, 0, 1, 2}});
  expect_equal(m, Ref{{2, 2}, {1, 1, 3, 3}});
}

TEST(TensorTest, ConversionsBetweenEveryPairOfDtypes) {
  // Whole numbers in [0, 100] are exact in every dtype.
  std::vector<double> values;
  for (int i = 0; i <= 100; i += 7) values.push_back(i);
  Tensor base = from_vector<double>(values, {static_cast<int64_t>(values.size())});
  for (DType from : kAllDTypes) {
    for (DType to_dtype : kAllDTypes) {
      Tensor a = to(base, from);
      Tensor b = to(a, to_dtype);
      EXPECT_EQ(b.dtype(), to_dtype);
      Ref want = ref_of(a);
      if (to_dtype == DType::kBool) {
        for (double& v : want.v) v = v != 0;
      }
      expect_equal(b, want, absl::StrCat(dtype_name(from), " -> ", dtype_name(to_dtype)));
    }
  }
  // Floats to integers truncate toward zero.
  Tensor f = from_vector<float>({2.7f, -2.7f, 0.5f}, {3});
  Tensor i = to(f, DType::kI64);
  expect_equal(i, Ref{{3}, {2, -2, 0}});
}

TEST(TensorTest, ItemAndToVector) {
  Tensor x = from_vector<int64_t>({5, 6}, {2});
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"item", "2 elements"}, [&] { item<float>(x); });
  std::vector<float> v = to_vector<float>(x);
  EXPECT_EQ(v, (std::vector<float>{5, 6}));
  Tensor b = from_vector<bool>({true, false, true}, {3});
  std::vector<bool> bv = to_vector<bool>(b);
  EXPECT_EQ(bv, (std::vector<bool>{true, false, true}));
  testing::expect_throws(absl::StatusCode::kInvalidArgument, {"from_vector", "[2, 2]"}, [&] {
    from_vector<float>({1, 2, 3}, {2, 2});
  });
}

TEST(TensorTest, CpuMemoryIsAccountedAndLargeBlocksAreReused) {
  reset_cpu_peak_memory();
  const int64_t before = cpu_memory_stats().allocated_bytes;
  {
    Tensor t = empty({1000}, {DType::kF64});
    EXPECT_EQ(cpu_memory_stats().allocated_bytes, before + 8000);
  }
  EXPECT_EQ(cpu_memory_stats().allocated_bytes, before);
  EXPECT_GE(cpu_memory_stats().peak_allocated_bytes, before + 8000);

  // A freed large block serves the next request of its size class.
  void* first;
  {
    Tensor big = empty({3 << 20}, {DType::kU8});
    first = big.raw_data();
  }
  const int64_t cached = cpu_memory_stats().cached_bytes;
  EXPECT_GE(cached, 3 << 20);
  Tensor again = empty({(3 << 20) - 100}, {DType::kU8});
  EXPECT_EQ(again.raw_data(), first);
  EXPECT_EQ(cpu_memory_stats().cached_bytes, cached - (4 << 20));  // 2 MiB granules
  cpu_allocator::empty_cache();
  EXPECT_EQ(cpu_memory_stats().cached_bytes, 0);
}

}  // namespace
}  // namespace ts
