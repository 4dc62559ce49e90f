// Every op on CUDA against the same op on the CPU (itself tested against
// float64 references), on the same inputs: the backend-comparison harness for
// what the OpInfo table (tests/op_info/cuda_vs_cpu_test.cc, every elementwise
// op, reduction, softmax and matmul entry) does not cover: copies, more
// reductions, matmul shapes, alignments, TF32 and the cuBLAS path, indexing,
// random numbers, and the elementwise corners the table leaves out. Skips,
// with the reason, on machines without a usable GPU. Device-mismatch errors
// are checked everywhere, using a tensor that only claims to be on the GPU
// (the ops must reject it before touching its memory).
#include <cmath>
#include <functional>

#include "tensor/cuda_gemm.h"
#include "tests/tensor/testing.h"

namespace ts {
namespace {

using testing::Layout;
using testing::ref_of;

using OpFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct OpCase {
  std::string name;
  std::vector<Tensor> inputs;  // on the CPU
  OpFn fn;
  // Sums of many terms (reductions, products): see expect_close_to_cpu.
  bool normwise = false;
};

class CudaOpsTest : public testing::SeededTest {
 protected:
  // A product cuBLASLt cannot run is an error here, not a detour through
  // cuBLAS as elsewhere (tensor/cuda/matmul.cu).
  static void SetUpTestSuite() { set_cuda_gemm_library(CudaGemmLibrary::kCublasLtStrict); }

  // a @ b on both devices; returns 1, the products it ran on the GPU.
  int64_t check_matmul(const std::string& name, const Tensor& a, const Tensor& b) {
    check({name, {a, b}, [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); }, true});
    return 1;
  }

  // Each pair of shapes in every floating dtype and both layouts of each
  // operand; returns the products run on the GPU.
  int64_t check_matmuls(const std::string& label, absl::Span<const std::pair<Shape, Shape>> shapes) {
    int64_t products = 0;
    for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
      for (const auto& [sa, sb] : shapes) {
        for (Layout la : {Layout::kContiguous, Layout::kTransposed}) {
          for (Layout lb : {Layout::kContiguous, Layout::kTransposed}) {
            products += check_matmul(
                absl::StrCat(label, " ", dtype_name(dtype), shape_str(sa), la == Layout::kTransposed ? "^T" : "",
                             shape_str(sb), lb == Layout::kTransposed ? "^T" : ""),
                input(sa, dtype, -1, 1, la), input(sb, dtype, -1, 1, lb));
          }
        }
      }
    }
    return products;
  }

  // Runs the case on both devices and compares: exactly for integer and bool
  // results, else within the result dtype's tolerance.
  void check(const OpCase& c) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> on_gpu;
    // The GPU inputs keep the CPU inputs' layouts (transposed, strided,
    // offset), so the strided kernels run too.
    for (const Tensor& t : c.inputs) on_gpu.push_back(testing::to_device_keeping_layout(t, Device::cuda(0)));
    const Tensor cpu_result = c.fn(c.inputs);
    const Tensor gpu_result = c.fn(on_gpu);
    EXPECT_TRUE(gpu_result.device().is_cuda());
    // The CPU accumulates in double, the GPU in f32.
    testing::expect_close_to_cpu(gpu_result, cpu_result, c.normwise, c.name);
  }

  Tensor input(Dims shape, DType dtype, double lo = -2, double hi = 2, Layout layout = Layout::kContiguous) {
    return testing::random_tensor(rng(), shape, dtype, lo, hi, layout);
  }
};

// The table's dtypes for arithmetic stop at i32/i64 (u8 wraps below zero,
// where its float64 references do not), and its shapes at 2^18 elements.
TEST_F(CudaOpsTest, ElementwiseCornersTheOpInfoTableLeavesOut) {
  TS_SKIP_WITHOUT_CUDA();
  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, Binary> ops[] = {{"add", add}, {"sub", sub},         {"mul", mul},        {"div", div},
                                                {"pow", pow}, {"maximum", maximum}, {"minimum", minimum}};
  const std::pair<Shape, Shape> shapes[] = {
      {{64, 33}, {64, 33}}, {{64, 1}, {1, 33}}, {{33}, {4, 64, 33}}, {{}, {5, 7}}, {{(1 << 20) + 1}, {(1 << 20) + 1}}};
  for (auto [name, op] : ops) {
    for (const auto& [sa, sb] : shapes) {
      check({absl::StrCat(name, " u8 ", shape_str(sa), "x", shape_str(sb)),
             {input(sa, DType::kU8, 0.5, 3),
              input(sb, DType::kU8, 0.5, 3, sb.size() >= 2 ? Layout::kTransposed : Layout::kContiguous)},
             // An init capture: clang before 16 cannot capture a structured binding.
             [op = op](const std::vector<Tensor>& x) { return op(x[0], x[1]); }});
    }
  }
  check({"abs u8", {input({1000}, DType::kU8, 0, 100)}, [](const std::vector<Tensor>& x) { return abs(x[0]); }});
  // 2^24 + 3 elements: the vectorized path with a ragged tail, and
  // grid-stride loops.
  check({"neg large", {input({(1 << 24) + 3}, DType::kF32)}, [](const std::vector<Tensor>& x) { return neg(x[0]); }});
  // Operands of two dtypes, promoted.
  check({"where",
         {input({6, 1, 5}, DType::kBool), input({4, 5}, DType::kBF16), input({6, 4, 1}, DType::kF32)},
         [](const std::vector<Tensor>& x) { return where(x[0], x[1], x[2]); }});
  // Scalars taken in f32 with 16-bit tensors, as on the CPU (rounded to f16
  // first, 65536 and 1e5 were inf).
  for (const DType dtype : {DType::kF16, DType::kBF16}) {
    check({absl::StrCat("scalars in f32 ", dtype_name(dtype)),
           {input({1000}, dtype, 0.001, 0.5)},
           [](const std::vector<Tensor>& x) { return add(div(mul(x[0], 65536.0), 1e5), mul(x[0], 1e-5)); }});
  }
}

TEST_F(CudaOpsTest, CopiesBetweenEveryDtypeAndLayout) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType from : kAllDTypes) {
    for (DType to_dtype : kAllDTypes) {
      check({absl::StrCat("to ", dtype_name(from), "->", dtype_name(to_dtype)),
             {input({37, 19}, from, 0, 100, Layout::kTransposed)},
             [to_dtype](const std::vector<Tensor>& x) { return to(x[0], to_dtype); }});
    }
  }
  // Out of the integer's range, infinite and NaN: both clamp, NaN to 0.
  for (DType from : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    const Tensor extremes =
        to(from_vector<double>({2.7, -2.7, 300, -1, 3e9, -3e9, 1e20, -1e20, INFINITY, -INFINITY, NAN}, {11}), from);
    for (DType to_dtype : {DType::kI32, DType::kI64, DType::kU8}) {
      check({absl::StrCat("to ", dtype_name(from), "->", dtype_name(to_dtype), " out of range"),
             {extremes},
             [to_dtype](const std::vector<Tensor>& x) { return to(x[0], to_dtype); }});
    }
  }
  check({"contiguous of a strided view",
         {input({5, 8, 3}, DType::kF32, -1, 1, Layout::kStrided)},
         [](const std::vector<Tensor>& x) { return contiguous(x[0]); }});
  check({"fill", {input({3, 4}, DType::kF16)}, [](const std::vector<Tensor>& x) {
           return full(x[0].shape(), 1.5, {x[0].dtype(), x[0].device()});
         }});
  check({"arange", {input({1}, DType::kF32)}, [](const std::vector<Tensor>& x) {
           return arange(-3, 1000, 0.5, {DType::kF32, x[0].device()});
         }});
}

TEST_F(CudaOpsTest, ReductionsAndSoftmax) {
  TS_SKIP_WITHOUT_CUDA();
  const std::vector<Shape> dim_sets = {{}, {0}, {1}, {2}, {0, 2}, {1, 2}};
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    const Tensor x = input({17, 33, 65}, dtype, -1, 1, Layout::kTransposed);
    for (const Shape& dims : dim_sets) {
      const std::string d = shape_str(dims);
      check({"sum " + d, {x}, [dims](const std::vector<Tensor>& v) { return sum(v[0], dims); }, true});
      check({"mean " + d, {x}, [dims](const std::vector<Tensor>& v) { return mean(v[0], dims, true); }, true});
      check({"max " + d, {x}, [dims](const std::vector<Tensor>& v) { return max(v[0], dims); }});
      check({"min " + d, {x}, [dims](const std::vector<Tensor>& v) { return min(v[0], dims); }});
      check({"var " + d, {x}, [dims](const std::vector<Tensor>& v) { return var(v[0], dims); }, true});
      check({"norm2 " + d, {x}, [dims](const std::vector<Tensor>& v) { return norm(v[0], 2, dims); }});
      check({"norm3 " + d, {x}, [dims](const std::vector<Tensor>& v) { return norm(v[0], 3, dims); }});
      check({"norminf " + d, {x}, [dims](const std::vector<Tensor>& v) { return norm(v[0], INFINITY, dims); }});
    }
    for (int64_t dim : {0, 1, 2}) {
      check({absl::StrCat("argmax ", dim), {x}, [dim](const std::vector<Tensor>& v) { return argmax(v[0], dim); }});
      check({absl::StrCat("argmin ", dim), {x}, [dim](const std::vector<Tensor>& v) { return argmin(v[0], dim); }});
      check({absl::StrCat("softmax ", dim), {x}, [dim](const std::vector<Tensor>& v) { return softmax(v[0], dim); }});
      check({absl::StrCat("log_softmax ", dim), {x}, [dim](const std::vector<Tensor>& v) {
               return log_softmax(v[0], dim);
             }});
    }
  }
  // Shapes that exercise each reduction strategy: one huge row, few long rows,
  // long columns, many short rows; integer sums.
  for (const auto& [shape, dims] : std::vector<std::pair<Shape, Shape>>{
           {{(1 << 26)}, {}}, {{3, 1000003}, {1}}, {{1000003, 3}, {0}}, {{100000, 7}, {1}}, {{8, 5000, 8}, {1}}}) {
    const Tensor x = input(shape, DType::kF32, 0, 1);
    check({"sum " + shape_str(shape),
           {x},
           [dims = dims](const std::vector<Tensor>& v) { return sum(v[0], dims); },
           true});
    check({"max " + shape_str(shape), {x}, [dims = dims](const std::vector<Tensor>& v) { return max(v[0], dims); }});
  }
  check({"sum i32", {input({1000, 33}, DType::kI32, -100, 100)}, [](const std::vector<Tensor>& v) {
           return sum(v[0], {0});
         }});
  check({"argmax ties", {input({100, 1000}, DType::kI64, 0, 3)}, [](const std::vector<Tensor>& v) {
           return argmax(v[0], 1);
         }});
  check({"softmax wide", {input({4, 50000}, DType::kF16, -8, 8)}, [](const std::vector<Tensor>& v) {
           return softmax(v[0], 1);
         }});
}

TEST_F(CudaOpsTest, Matmul) {
  TS_SKIP_WITHOUT_CUDA();
  const CudaGemmCounts before = cuda_gemm_counts();
  int64_t products = 0;
  const std::pair<Shape, Shape> shapes[] = {{{64, 128}, {128, 96}},
                                            {{7}, {7, 5}},
                                            {{3, 7}, {7}},
                                            {{4, 33, 17}, {4, 17, 9}},
                                            {{2, 1, 5, 8}, {3, 8, 6}},
                                            {{512, 512}, {512, 512}},
                                            // One factor shared by the whole batch (batch stride 0), at odd sizes
                                            // and at sizes the tensor-core kernels take.
                                            {{4, 33, 17}, {17, 9}},
                                            {{33, 17}, {4, 17, 9}},
                                            {{8, 64, 128}, {128, 96}},
                                            {{64, 128}, {8, 128, 96}},
                                            {{8, 64, 128}, {8, 128, 96}},
                                            // A long sum over few outputs, where split-K algorithms are chosen
                                            // (their partial sums must stay f32 for 16-bit operands).
                                            {{64, 16384}, {16384, 64}}};
  products += check_matmuls("matmul", shapes);
  // Operands at 16-byte aligned leading dimensions whose first element is 0,
  // 1, 2, 4 or 8 elements into a row, each operand on its own. A product is
  // planned once per shapes, strides and pointer alignments, so the aligned
  // run first must not hand its algorithm (which may read 16 bytes at a
  // time) to a misaligned one; mixed alignments are where cuBLASLt users
  // have seen failures.
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    const Tensor a = input({64, 136}, dtype, -1, 1), b = input({128, 104}, dtype, -1, 1);
    for (int64_t skip_a : {0, 1, 2, 4, 8}) {
      for (int64_t skip_b : {0, 1, 2, 4, 8}) {
        products +=
            check_matmul(absl::StrCat("matmul ", dtype_name(dtype), " views skipping ", skip_a, " and ", skip_b),
                         a.narrow(1, skip_a, 128), b.narrow(1, skip_b, 96));
      }
    }
  }
  // Every one of them ran on cuBLASLt (strict: one it could not run fails).
  const CudaGemmCounts after = cuda_gemm_counts();
  EXPECT_EQ(after.cublaslt - before.cublaslt, products);
  EXPECT_EQ(after.cublas, before.cublas);
  // TF32 trades precision for speed: within its own tolerance (1e-3), relative
  // to the largest output (inputs rounded to 10-bit mantissas leave an
  // absolute error of about 1e-2 on every output, however small).
  set_allow_tf32(true);
  const Tensor a = input({256, 256}, DType::kF32), b = input({256, 256}, DType::kF32);
  Tensor cpu_result = matmul(a, b);
  Tensor ga = to(a, Device::cuda(0));
  Tensor gb = to(b, Device::cuda(0));
  Tensor gpu_result = matmul(ga, gb);
  set_allow_tf32(false);
  double largest = 0;
  for (double v : ref_of(cpu_result).v) largest = std::max(largest, std::abs(v));
  testing::expect_close(gpu_result, ref_of(cpu_result), 1e-3, largest, "tf32 matmul");
}

// cuBLAS alone (TS_CUBLASLT=0), the path for what cuBLASLt cannot run.
TEST_F(CudaOpsTest, MatmulThroughCublas) {
  TS_SKIP_WITHOUT_CUDA();
  struct CublasAlone {
    CublasAlone() { set_cuda_gemm_library(CudaGemmLibrary::kCublas); }
    ~CublasAlone() { set_cuda_gemm_library(CudaGemmLibrary::kCublasLtStrict); }
  } cublas_alone;
  const CudaGemmCounts before = cuda_gemm_counts();
  const std::pair<Shape, Shape> shapes[] = {
      {{37, 41}, {41, 19}}, {{3, 29, 31}, {31, 23}}, {{3, 29, 31}, {3, 31, 23}}, {{64, 16384}, {16384, 64}}};
  const int64_t products = check_matmuls("cuBLAS matmul", shapes);
  const CudaGemmCounts after = cuda_gemm_counts();
  EXPECT_EQ(after.cublas - before.cublas, products);
  EXPECT_EQ(after.cublaslt, before.cublaslt);
}

TEST_F(CudaOpsTest, Indexing) {
  TS_SKIP_WITHOUT_CUDA();
  const Tensor x = input({6, 7, 8}, DType::kF32, -3, 3, Layout::kTransposed);
  for (int64_t dim : {0, 1, 2}) {
    check({absl::StrCat("cat ", dim), {x, input({6, 7, 8}, DType::kBF16)}, [dim](const std::vector<Tensor>& v) {
             return cat(v, dim);
           }});
    const Tensor idx = input({11}, DType::kI64, 0, x.shape()[dim]);
    check({absl::StrCat("index_select ", dim), {x, idx}, [dim](const std::vector<Tensor>& v) {
             return index_select(v[0], dim, v[1]);
           }});
    Shape ishape = {5, 6, 7};
    ishape[dim] = 12;
    const Tensor gidx = input(ishape, DType::kI64, 0, x.shape()[dim]);
    check({absl::StrCat("gather ", dim), {x, gidx}, [dim](const std::vector<Tensor>& v) {
             return gather(v[0], dim, v[1]);
           }});
    for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64, DType::kU8}) {
      // Integer-valued sources: sums are exact in any order.
      check({absl::StrCat("scatter_add ", dim, " ", dtype_name(dtype)),
             {input({6, 7, 8}, dtype, 0, 4), gidx, input(ishape, dtype, 0, 4)},
             [dim](const std::vector<Tensor>& v) { return scatter_add(v[0], dim, v[1], v[2]); }});
    }
  }
  check({"one_hot", {input({50}, DType::kI64, 0, 10)}, [](const std::vector<Tensor>& v) { return one_hot(v[0], 10); }});
  Tensor gx = to(x, Device::cuda(0));
  Tensor bad = full({2}, 6, {DType::kI64, Device::cuda(0)});
  testing::expect_throws(absl::StatusCode::kOutOfRange, {"index_select", "index 6"}, [&] { index_select(gx, 0, bad); });
}

// An embedding's backward: 4000 rows of real values into 50, most targets
// hit ~80 times. CUDA adds each target's sources in position order, as the
// CPU does, so the sums agree to the bit, and every run gives the same bits.
TEST_F(CudaOpsTest, ScatterAddAddsInTheCpuOrder) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::kF32, DType::kF64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Tensor base = input({50, 64}, dtype);
    const Tensor rows = input({4000, 1}, DType::kI64, 0, 50);
    const Tensor index = contiguous(rows.expand({4000, 64}));
    const Tensor src = input({4000, 64}, dtype);
    const Tensor on_cpu = scatter_add(base, 0, index, src);
    const auto on_gpu = [&] {
      return scatter_add(to(base, Device::cuda(0)), 0, to(index, Device::cuda(0)), to(src, Device::cuda(0)));
    };
    testing::expect_equal(on_gpu(), ref_of(on_cpu), "scatter_add");
    testing::expect_equal(on_gpu(), ref_of(on_cpu), "scatter_add, again");
  }
}

TEST_F(CudaOpsTest, RandomNumbersMatchTheCpuStream) {
  TS_SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    Generator cpu_gen(2024), gpu_gen(2024);
    Tensor u_cpu = uniform({10007}, -2, 5, {dtype}, &cpu_gen);
    Tensor u_gpu = uniform({10007}, -2, 5, {dtype, Device::cuda(0)}, &gpu_gen);
    testing::expect_equal(u_gpu, ref_of(u_cpu), absl::StrCat("uniform ", dtype_name(dtype)));
    Tensor n_cpu = randn({10007}, {dtype}, &cpu_gen);
    Tensor n_gpu = randn({10007}, {dtype, Device::cuda(0)}, &gpu_gen);
    // log/cos/sin may differ by an ulp or two between libm and CUDA; rounded
    // to f16/bf16, such a difference can become one ulp of those.
    const double tol = dtype == DType::kF64 ? 1e-13 : dtype == DType::kF32 ? 1e-5 : testing::tolerance(dtype);
    testing::expect_close(n_gpu, ref_of(n_cpu), tol, 1e-3, absl::StrCat("randn ", dtype_name(dtype)));
    Tensor b_cpu = bernoulli({10007}, 0.4, {dtype}, &cpu_gen);
    Tensor b_gpu = bernoulli({10007}, 0.4, {dtype, Device::cuda(0)}, &gpu_gen);
    testing::expect_equal(b_gpu, ref_of(b_cpu), absl::StrCat("bernoulli ", dtype_name(dtype)));
  }
}

// Host memory that claims to live on cuda:0; ops must fail before reading it.
Tensor fake_cuda_tensor(Dims shape) {
  const int64_t bytes = shape_numel(shape) * 4;
  auto storage = std::make_shared<Storage>(std::malloc(bytes), bytes, Device::cuda(0), [](void* p) { std::free(p); });
  return Tensor(storage, Shape(shape.begin(), shape.end()), contiguous_strides(shape), 0, DType::kF32);
}

TEST(DeviceMismatchTest, OpsOnTensorsFromTwoDevicesFailNamingBoth) {
  const Tensor gpu = fake_cuda_tensor({2, 3});
  const Tensor cpu = zeros({2, 3});
  const std::vector<std::function<void()>> ops = {
      [&] { add(cpu, gpu); },      [&] { matmul(cpu, gpu); },          [&] { where(gpu, cpu, cpu); },
      [&] { cat({cpu, gpu}, 0); }, [&] { index_select(gpu, 0, cpu); },
  };
  for (const auto& op : ops) {
    testing::expect_throws(absl::StatusCode::kInvalidArgument, {"different devices", "on cpu", "on cuda:0"}, op);
  }
}

}  // namespace
}  // namespace ts
