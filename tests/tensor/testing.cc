#include "tests/tensor/testing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ts::testing {

uint64_t test_seed() {
  if (const char* env = std::getenv("TS_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  static std::mt19937_64 seeds(std::chrono::steady_clock::now().time_since_epoch().count());
  return seeds();
}

Tensor random_tensor(std::mt19937_64& rng, Dims shape, DType dtype, double lo, double hi, Layout layout) {
  // Generate in memory order for the requested layout, then view it back.
  Shape storage_shape(shape.begin(), shape.end());
  const int64_t nd = storage_shape.size();
  if (layout == Layout::kTransposed && nd >= 2) std::swap(storage_shape[nd - 1], storage_shape[nd - 2]);
  if (layout == Layout::kStrided && nd >= 1) storage_shape[nd - 1] *= 2;
  std::vector<double> values(shape_numel(storage_shape));
  std::uniform_real_distribution<double> uniform(lo, hi);
  for (double& v : values) {
    v = uniform(rng);
    if (dtype == DType::kBool) v = v < (lo + hi) / 2 ? 0 : 1;
    if (is_integral(dtype)) v = std::floor(v);
  }
  Tensor t = to(from_vector<double>(values, storage_shape), dtype);
  if (layout == Layout::kTransposed && nd >= 2) t = t.transpose(nd - 1, nd - 2);
  if (layout == Layout::kStrided && nd >= 1) t = t.slice(nd - 1, 0, storage_shape[nd - 1], 2);
  EXPECT_EQ(Shape(shape.begin(), shape.end()), t.shape());
  return t;
}

int64_t Ref::index(Dims coords) const {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + coords[d];
  return i;
}

Ref ref_of(const Tensor& t) { return Ref{t.shape(), to_vector<double>(t)}; }

Ref ref_map(const Ref& x, const std::function<double(double)>& f) {
  Ref out = x;
  for (double& v : out.v) v = f(v);
  return out;
}

Ref ref_zip(const Ref& a, const Ref& b, const std::function<double(double, double)>& f) {
  const Shape shape = broadcast_shapes("ref_zip", a.shape, b.shape);
  Ref out{shape, std::vector<double>(shape_numel(shape))};
  const size_t nd = shape.size();
  std::vector<int64_t> coords(nd, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i;
    for (int64_t d = nd - 1; d >= 0; --d) {
      coords[d] = rest % shape[d];
      rest /= shape[d];
    }
    auto pick = [&](const Ref& x) {
      int64_t idx = 0;
      const size_t lead = nd - x.shape.size();
      for (size_t d = 0; d < x.shape.size(); ++d) idx = idx * x.shape[d] + (x.shape[d] == 1 ? 0 : coords[d + lead]);
      return x.v[idx];
    };
    out.v[i] = f(pick(a), pick(b));
  }
  return out;
}

Ref ref_expand(const Ref& x, Dims shape) {
  return ref_zip(x, Ref{Shape(shape.begin(), shape.end()), std::vector<double>(shape_numel(shape), 0.0)},
                 [](double v, double) { return v; });
}

Ref ref_reduce(const Ref& x, Dims dims, bool keepdim, const std::function<double(const std::vector<double>&)>& f) {
  const int64_t nd = x.shape.size();
  std::vector<bool> reduced(nd, dims.empty());
  for (int64_t d : dims) reduced[d < 0 ? d + nd : d] = true;
  Shape out_shape, kept_shape;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d]) kept_shape.push_back(x.shape[d]);
    if (!reduced[d] || keepdim) out_shape.push_back(reduced[d] ? 1 : x.shape[d]);
  }
  std::vector<std::vector<double>> groups(shape_numel(kept_shape));
  std::vector<int64_t> coords(nd);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rest = i;
    for (int64_t d = nd - 1; d >= 0; --d) {
      coords[d] = rest % x.shape[d];
      rest /= x.shape[d];
    }
    int64_t g = 0;
    for (int64_t d = 0; d < nd; ++d) {
      if (!reduced[d]) g = g * x.shape[d] + coords[d];
    }
    groups[g].push_back(x.v[i]);
  }
  Ref out{out_shape, {}};
  for (const auto& group : groups) out.v.push_back(f(group));
  return out;
}

Ref ref_round(const Ref& x, DType dtype) { return ref_of(to(from_vector<double>(x.v, x.shape), dtype)); }

std::pair<Ref, Ref> ref_matmul(Ref a, Ref b) {
  const bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
  if (a_vec) a.shape.insert(a.shape.begin(), 1);
  if (b_vec) b.shape.push_back(1);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  const Shape batch = broadcast_shapes("ref_matmul", Dims(a.shape).subspan(0, a.shape.size() - 2),
                                       Dims(b.shape).subspan(0, b.shape.size() - 2));
  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  const Ref ea = ref_expand(a, a_full), eb = ref_expand(b, b_full);
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

Ref ref_softmax(const Ref& x, int64_t dim, bool log) {
  const int64_t nd = x.shape.size();
  if (dim < 0) dim += nd;
  int64_t outer = 1, n = x.shape[dim], inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.shape[d];
  for (int64_t d = dim + 1; d < nd; ++d) inner *= x.shape[d];
  Ref y = x;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) -> double& { return y.v[(o * n + j) * inner + i]; };
      double m = -INFINITY, total = 0;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, x.v[(o * n + j) * inner + i]);
      for (int64_t j = 0; j < n; ++j) total += std::exp(x.v[(o * n + j) * inner + i] - m);
      for (int64_t j = 0; j < n; ++j) {
        const double s = x.v[(o * n + j) * inner + i] - m;
        at(j) = log ? s - std::log(total) : std::exp(s) / total;
      }
    }
  }
  return y;
}

double spacing(double x, DType dtype) {
  int mantissa_bits = 52, min_exponent = -1022;
  switch (dtype) {
    case DType::kF32:
      mantissa_bits = 23, min_exponent = -126;
      break;
    case DType::kF16:
      mantissa_bits = 10, min_exponent = -14;
      break;
    case DType::kBF16:
      mantissa_bits = 7, min_exponent = -126;
      break;
    default:
      break;
  }
  int e = 0;
  std::frexp(std::max(std::abs(x), std::ldexp(1.0, min_exponent)), &e);
  return std::ldexp(1.0, e - 1 - mantissa_bits);
}

double tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return 1e-12;
    case DType::kF32:
      return 1e-5;
    case DType::kF16:
    case DType::kBF16:
      return 1e-2;
    default:
      return 0;
  }
}

namespace {

std::string where_msg(const std::string& what, const Shape& shape, int64_t i) {
  return absl::StrCat(what.empty() ? "" : what + ": ", "element ", i, " of ", shape_str(shape));
}

}  // namespace

void expect_close(const Tensor& actual, const Ref& expected, double tol, double floor, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape) << what;
  const std::vector<double> got = to_vector<double>(actual);
  double worst = 0;
  int64_t worst_at = -1;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double e = expected.v[i], a = got[i];
    if (std::isnan(e) || std::isnan(a)) {
      EXPECT_EQ(std::isnan(e), std::isnan(a)) << where_msg(what, expected.shape, i) << ": got " << a << ", want " << e;
      continue;
    }
    if (std::isinf(e) || std::isinf(a)) {
      EXPECT_EQ(e, a) << where_msg(what, expected.shape, i);
      continue;
    }
    const double err = std::abs(a - e) / std::max(std::abs(e), floor);
    if (err > worst) {
      worst = err;
      worst_at = i;
    }
  }
  EXPECT_LE(worst, tol) << where_msg(what, expected.shape, worst_at) << ": got " << got[worst_at] << ", want "
                        << expected.v[worst_at] << " (relative error " << worst << ", tolerance " << tol << ")";
}

void expect_equal(const Tensor& actual, const Ref& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape) << what;
  const std::vector<double> got = to_vector<double>(actual);
  for (int64_t i = 0; i < expected.numel(); ++i) {
    if (got[i] != expected.v[i] && !(std::isnan(got[i]) && std::isnan(expected.v[i]))) {
      ADD_FAILURE() << where_msg(what, expected.shape, i) << ": got " << got[i] << ", want " << expected.v[i];
      return;
    }
  }
}

Tensor to_device_keeping_layout(const Tensor& t, Device device, int64_t extra_offset) {
  const int64_t elements = t.storage()->nbytes() / t.itemsize();
  Tensor whole(t.storage(), {elements}, {1}, 0, t.dtype());
  if (extra_offset > 0) {
    const Tensor padded = zeros({extra_offset + elements}, {t.dtype()});
    copy_(padded.narrow(0, extra_offset, elements), whole);
    whole = padded;
  }
  const Tensor moved = to(whole, device);
  return Tensor(moved.storage(), t.shape(), t.strides(), t.offset() + extra_offset, t.dtype());
}

void expect_close_to_cpu(const Tensor& actual, const Tensor& cpu_result, bool normwise, const std::string& what) {
  EXPECT_EQ(actual.dtype(), cpu_result.dtype()) << what;
  const Ref want = ref_of(cpu_result);
  if (!is_floating(cpu_result.dtype())) {
    expect_equal(actual, want, what);
    return;
  }
  const double scale = normwise ? 1.0 : 1e-3;
  double floor = 1e-3;
  for (double v : want.v) {
    if (std::isfinite(v)) floor = std::max(floor, scale * std::abs(v));
  }
  expect_close(actual, want, tolerance(cpu_result.dtype()), floor, what);
}

void expect_error(const absl::Status& status, absl::StatusCode code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& f : fragments) {
    EXPECT_NE(std::string(status.message()).find(f), std::string::npos)
        << "message \"" << status.message() << "\" lacks \"" << f << "\"";
  }
}

void expect_throws(absl::StatusCode code, const std::vector<std::string>& fragments, const std::function<void()>& f) {
  const absl::Status status = capture(f);
  ASSERT_FALSE(status.ok()) << "expected a ts::Error, nothing was thrown";
  expect_error(status, code, fragments);
}

}  // namespace ts::testing
