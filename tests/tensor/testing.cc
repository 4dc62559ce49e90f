#include "tests/tensor/testing.h"

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
  Tensor t = value_or_die(from_vector<double>(values, storage_shape));
  t = value_or_die(to(t, dtype));
  if (layout == Layout::kTransposed && nd >= 2) t = value_or_die(t.transpose(nd - 1, nd - 2));
  if (layout == Layout::kStrided && nd >= 1) t = value_or_die(t.slice(nd - 1, 0, storage_shape[nd - 1], 2));
  EXPECT_EQ(Shape(shape.begin(), shape.end()), t.shape());
  return t;
}

int64_t Ref::index(Dims coords) const {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + coords[d];
  return i;
}

Ref ref_of(const Tensor& t) { return Ref{t.shape(), value_or_die(to_vector<double>(t))}; }

Ref ref_map(const Ref& x, const std::function<double(double)>& f) {
  Ref out = x;
  for (double& v : out.v) v = f(v);
  return out;
}

Ref ref_zip(const Ref& a, const Ref& b, const std::function<double(double, double)>& f) {
  const Shape shape = value_or_die(broadcast_shapes("ref_zip", a.shape, b.shape));
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

Ref ref_round(const Ref& x, DType dtype) {
  Tensor t = value_or_die(from_vector<double>(x.v, x.shape));
  return ref_of(value_or_die(to(t, dtype)));
}

double tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64: return 1e-12;
    case DType::kF32: return 1e-5;
    case DType::kF16:
    case DType::kBF16: return 1e-2;
    default: return 0;
  }
}

namespace {

std::string where_msg(const std::string& what, const Shape& shape, int64_t i) {
  return absl::StrCat(what.empty() ? "" : what + ": ", "element ", i, " of ", shape_str(shape));
}

}  // namespace

void expect_close(const Tensor& actual, const Ref& expected, double tol, double floor, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape) << what;
  const std::vector<double> got = value_or_die(to_vector<double>(actual));
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
  const std::vector<double> got = value_or_die(to_vector<double>(actual));
  for (int64_t i = 0; i < expected.numel(); ++i) {
    if (got[i] != expected.v[i] && !(std::isnan(got[i]) && std::isnan(expected.v[i]))) {
      ADD_FAILURE() << where_msg(what, expected.shape, i) << ": got " << got[i] << ", want " << expected.v[i];
      return;
    }
  }
}

void expect_error(const absl::Status& status, absl::StatusCode code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(status.code(), code) << status;
  for (const std::string& f : fragments) {
    EXPECT_NE(std::string(status.message()).find(f), std::string::npos)
        << "message \"" << status.message() << "\" lacks \"" << f << "\"";
  }
}

}  // namespace ts::testing
