#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/ops.h"
#include "tensor/op_table.h"
#include "tests/op_info/op_info.h"

namespace ts::testing {
namespace {

using autograd::Variable;
using Vars = std::vector<Variable>;

// ---- What the rows of tensor/op_table.h give: how to call each op, on
// Tensors and on Variables (predicates have no differentiable form), with a
// Scalar on either side for binary ops.
struct Row {
  const char* name;
  DTypeRule rule;
  std::optional<UnaryOp> unary_op;
  std::optional<BinaryOp> binary_op;
  TensorFn op;
  TensorScalarFn op_with_scalar;
  VariableFn variable_op;
  VariableScalarFn variable_op_with_scalar;
};

#define TS_OPINFO_VARIABLE_UNARY_kNumeric(name) [](const Vars& x) { return autograd::name(x[0]); }
#define TS_OPINFO_VARIABLE_UNARY_kFloating(name) TS_OPINFO_VARIABLE_UNARY_kNumeric(name)
#define TS_OPINFO_VARIABLE_UNARY_kPredicate(name) nullptr
#define TS_OPINFO_UNARY_ROW(name, Functor, rule)                   \
  Row{#name,                                                       \
      DTypeRule::rule,                                             \
      UnaryOp::k##Functor,                                         \
      std::nullopt,                                                \
      [](const std::vector<Tensor>& x) { return ts::name(x[0]); }, \
      nullptr,                                                     \
      TS_OPINFO_VARIABLE_UNARY_##rule(name),                       \
      nullptr},

#define TS_OPINFO_VARIABLE_BINARY_kNumeric(name)                                  \
  [](const Vars& x) { return autograd::name(x[0], x[1]); },                       \
      [](const Variable& x, const Scalar& s, int scalar_operand) {                \
        return scalar_operand == 0 ? autograd::name(s, x) : autograd::name(x, s); \
      }
#define TS_OPINFO_VARIABLE_BINARY_kFloating(name) TS_OPINFO_VARIABLE_BINARY_kNumeric(name)
#define TS_OPINFO_VARIABLE_BINARY_kPredicate(name) nullptr, nullptr
#define TS_OPINFO_BINARY_ROW(name, Functor, rule)                        \
  Row{#name,                                                             \
      DTypeRule::rule,                                                   \
      std::nullopt,                                                      \
      BinaryOp::k##Functor,                                              \
      [](const std::vector<Tensor>& x) { return ts::name(x[0], x[1]); }, \
      [](const Tensor& x, const Scalar& s, int scalar_operand) {         \
        return scalar_operand == 0 ? ts::name(s, x) : ts::name(x, s);    \
      },                                                                 \
      TS_OPINFO_VARIABLE_BINARY_##rule(name)},

const std::vector<Row>& rows() {
  static const auto* rows = new std::vector<Row>{TS_UNARY_OPS(TS_OPINFO_UNARY_ROW) TS_BINARY_OPS(TS_OPINFO_BINARY_ROW)};
  return *rows;
}

#undef TS_OPINFO_UNARY_ROW
#undef TS_OPINFO_VARIABLE_UNARY_kNumeric
#undef TS_OPINFO_VARIABLE_UNARY_kFloating
#undef TS_OPINFO_VARIABLE_UNARY_kPredicate
#undef TS_OPINFO_BINARY_ROW
#undef TS_OPINFO_VARIABLE_BINARY_kNumeric
#undef TS_OPINFO_VARIABLE_BINARY_kFloating
#undef TS_OPINFO_VARIABLE_BINARY_kPredicate

// ---- What a row's dtype rule gives: the dtypes to test and the result's.
const std::vector<DType> kFloatingDTypes = {DType::kF16, DType::kBF16, DType::kF32, DType::kF64};

std::vector<DType> dtypes_of(DTypeRule rule) {
  switch (rule) {
    // Integer inputs of floating rows are computed in f32. u8 is left out:
    // its arithmetic wraps below zero, where the float64 references do not
    // (elementwise_test covers u8).
    case DTypeRule::kNumeric:
    case DTypeRule::kFloating:
      return {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI32, DType::kI64};
    case DTypeRule::kPredicate:
      return std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  }
  return {};
}

std::function<DType(DType)> result_dtype_of(DTypeRule rule) {
  switch (rule) {
    case DTypeRule::kNumeric:
      return [](DType d) { return d; };
    case DTypeRule::kFloating:
      return [](DType d) { return to_floating(d); };
    case DTypeRule::kPredicate:
      return [](DType) { return DType::kBool; };
  }
  return nullptr;
}

// ---- The samples of the elementwise rows.
Sample sample(std::vector<Shape> shapes, SampleSize size = SampleSize::kSmall) {
  return Sample{std::move(shapes), -1, size};
}
Sample scalar_sample(Shape tensor_shape, int scalar_operand, SampleSize size = SampleSize::kSmall) {
  return Sample{{std::move(tensor_shape)}, scalar_operand, size};
}

constexpr int64_t kLargeNumel = (1 << 18) + 3;

std::vector<Sample> unary_samples() {
  return {sample({Shape{2, 3}}),
          sample({Shape{}}),
          sample({Shape{7}}),
          sample({Shape{9, 37}}, SampleSize::kMedium),
          sample({Shape{0, 3}}, SampleSize::kMedium),
          sample({Shape{kLargeNumel}}, SampleSize::kLarge)};
}

// Broadcasting corners, empty tensors, a Scalar on either side, and a size
// that crosses every block and vector-width boundary.
std::vector<Sample> binary_samples() {
  using S = Shape;
  constexpr SampleSize kMedium = SampleSize::kMedium;
  return {sample({S{2, 3}, S{2, 3}}),
          sample({S{2, 3}, S{3}}),
          sample({S{2, 1}, S{1, 3}}),
          sample({S{4}, S{}}),
          sample({S{}, S{4}}),
          sample({S{2, 1, 3}, S{4, 1}}),
          sample({S{1}, S{7}}),
          scalar_sample(S{2, 3}, 1),
          scalar_sample(S{2, 3}, 0),
          scalar_sample(S{}, 1),
          sample({S{6, 13}, S{6, 13}}, kMedium),
          sample({S{6, 1}, S{1, 13}}, kMedium),
          sample({S{13}, S{3, 6, 13}}, kMedium),
          sample({S{}, S{4, 3}}, kMedium),
          sample({S{4, 3}, S{}}, kMedium),
          sample({S{17, 9}, S{17, 9}}, kMedium),
          sample({S{2, 0, 3}, S{1, 3}}, kMedium),
          scalar_sample(S{9, 37}, 1, kMedium),
          scalar_sample(S{9, 37}, 0, kMedium),
          sample({S{kLargeNumel}, S{kLargeNumel}}, SampleSize::kLarge)};
}

// ---- What each row needs by hand: its float64 reference, the domain of
// each operand and its gradient composed of separate ops (none for
// predicates). A new row of tensor/op_table.h adds its entry to row_specs().
struct RowSpec {
  RefFn reference;
  std::vector<Domain> domains;
  ComposedGradFn composed_grad;
  std::map<DType, double> tolerance_overrides = {};
};

using UnaryGrad = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& y);
using BinaryGrad = std::vector<Tensor> (*)(const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y);

RowSpec unary(double (*f)(double), Domain domain, UnaryGrad grad = nullptr) {
  RowSpec spec{[f](const std::vector<Ref>& x) { return ref_map(x[0], f); }, {std::move(domain)}, nullptr};
  if (grad) {
    spec.composed_grad = [grad](const Tensor& g, const std::vector<Tensor>& x, const Tensor& y) {
      return std::vector<Tensor>{grad(g, x[0], y)};
    };
  }
  return spec;
}

RowSpec binary(double (*f)(double, double), Domain a, Domain b, BinaryGrad grad = nullptr) {
  RowSpec spec{
      [f](const std::vector<Ref>& x) { return ref_zip(x[0], x[1], f); }, {std::move(a), std::move(b)}, nullptr};
  if (grad) {
    spec.composed_grad = [grad](const Tensor& g, const std::vector<Tensor>& x, const Tensor& y) {
      return grad(g, x[0], x[1], y);
    };
  }
  return spec;
}

double sign_ref(double x) { return std::isnan(x) ? x : (x > 0) - (x < 0); }
double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double gelu_ref(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
// Unreduced binary cross-entropy of logit a against target b, in the form
// that never overflows.
double bce_with_logits_ref(double a, double b) { return std::max(a, 0.0) - a * b + std::log1p(std::exp(-std::abs(a))); }
double maximum_ref(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double minimum_ref(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double k2OverSqrtPi = 1.12837916709551257390;

std::vector<double> integers(int lo, int hi) {
  std::vector<double> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}
std::vector<double> half_integers(int lo, int hi) {
  std::vector<double> v;
  for (int i = lo; i < hi; ++i) v.push_back(i + 0.5);
  return v;
}

const std::map<std::string, RowSpec>& row_specs() {
  using T = const Tensor&;
  using Grads = std::vector<Tensor>;
  // Comparisons draw whole numbers so that they see ties.
  const Domain compared{-2, 2, {}, /*whole=*/true};
  static const auto* specs = new std::map<std::string, RowSpec>{
      {"neg", unary([](double x) { return -x; }, {-3, 3}, [](T g, T, T) { return -g; })},
      {"abs", unary([](double x) { return std::abs(x); }, {-3, 3, {0}}, [](T g, T x, T) { return g * sign(x); })},
      {"sign", unary(sign_ref, {-3, 3, {0}}, [](T g, T, T) { return zeros_like(g); })},
      {"square", unary([](double x) { return x * x; }, {-3, 3}, [](T g, T x, T) { return g * x * 2; })},
      {"relu", unary([](double x) { return x < 0 ? 0 : x; }, {-3, 3, {0}},
                     [](T g, T, T y) { return where(gt(y, 0), g, 0.0); })},
      {"reciprocal", unary([](double x) { return 1 / x; }, {0.25, 4}, [](T g, T, T y) { return -g * y * y; })},
      {"exp", unary([](double x) { return std::exp(x); }, {-5, 5}, [](T g, T, T y) { return g * y; })},
      {"log", unary([](double x) { return std::log(x); }, {0.05, 20}, [](T g, T x, T) { return g / x; })},
      {"log1p", unary([](double x) { return std::log1p(x); }, {-0.9, 5}, [](T g, T x, T) { return g / (x + 1); })},
      {"expm1", unary([](double x) { return std::expm1(x); }, {-3, 3}, [](T g, T, T y) { return g * (y + 1); })},
      {"sqrt", unary([](double x) { return std::sqrt(x); }, {0.01, 20}, [](T g, T, T y) { return g / (y * 2); })},
      {"rsqrt",
       unary([](double x) { return 1 / std::sqrt(x); }, {0.01, 20}, [](T g, T, T y) { return g * y * y * y * -0.5; })},
      {"sin", unary([](double x) { return std::sin(x); }, {-3, 3}, [](T g, T x, T) { return g * cos(x); })},
      {"cos", unary([](double x) { return std::cos(x); }, {-3, 3}, [](T g, T x, T) { return -g * sin(x); })},
      {"tanh", unary([](double x) { return std::tanh(x); }, {-4, 4}, [](T g, T, T y) { return g * (1 - y * y); })},
      {"sigmoid", unary(sigmoid_ref, {-8, 8}, [](T g, T, T y) { return g * y * (1 - y); })},
      {"silu", unary([](double x) { return x / (1 + std::exp(-x)); }, {-6, 6},
                     [](T g, T x, T) {
                       const Tensor s = sigmoid(x);
                       return g * s * (1 + x * (1 - s));
                     })},
      // 20 is the threshold where the op switches to x.
      {"softplus", unary([](double x) { return x > 20 ? x : std::log1p(std::exp(x)); }, {-10, 30, {20}},
                         [](T g, T x, T) { return where(gt(x, 20), g, g * sigmoid(x)); })},
      {"gelu", unary(gelu_ref, {-4, 4},
                     [](T g, T x, T) {
                       const Tensor cdf = 0.5 * (1 + erf(x * kInvSqrt2));
                       return g * (cdf + x * exp(x * x * -0.5) * kInvSqrt2Pi);
                     })},
      {"erf", unary([](double x) { return std::erf(x); }, {-3, 3},
                    [](T g, T x, T) { return g * exp(-(x * x)) * k2OverSqrtPi; })},
      // Piecewise constant: zero gradient away from the jumps.
      {"floor", unary([](double x) { return std::floor(x); }, {-3, 3, integers(-3, 3)},
                      [](T g, T, T) { return zeros_like(g); })},
      {"ceil",
       unary([](double x) { return std::ceil(x); }, {-3, 3, integers(-3, 3)}, [](T g, T, T) { return zeros_like(g); })},
      // nearbyint rounds half to even in the default rounding mode.
      {"round", unary([](double x) { return std::nearbyint(x); }, {-3, 3, half_integers(-3, 3)},
                      [](T g, T, T) { return zeros_like(g); })},
      {"logical_not", unary([](double x) -> double { return x == 0; }, compared)},
      // Its true case comes from cpu_vs_f64_test's inputs with NaNs.
      {"isnan", unary([](double x) -> double { return std::isnan(x); }, {-2, 2})},

      {"add", binary([](double a, double b) { return a + b; }, {-4, 4}, {-4, 4},
                     [](T g, T, T, T) {
                       return Grads{g, g};
                     })},
      {"sub", binary([](double a, double b) { return a - b; }, {-4, 4}, {-4, 4},
                     [](T g, T, T, T) {
                       return Grads{g, -g};
                     })},
      {"mul", binary([](double a, double b) { return a * b; }, {-4, 4}, {-4, 4},
                     [](T g, T a, T b, T) {
                       return Grads{g * b, g * a};
                     })},
      // Ties split the gradient evenly (PyTorch's rule); the domains make
      // them unlikely enough that gradcheck never sees one.
      {"maximum", binary(maximum_ref, {-4, 4}, {-4, 4},
                         [](T g, T a, T b, T) {
                           return Grads{where(eq(a, b), g / 2, where(gt(a, b), g, 0.0)),
                                        where(eq(a, b), g / 2, where(lt(a, b), g, 0.0))};
                         })},
      {"minimum", binary(minimum_ref, {-4, 4}, {-4, 4},
                         [](T g, T a, T b, T) {
                           return Grads{where(eq(a, b), g / 2, where(lt(a, b), g, 0.0)),
                                        where(eq(a, b), g / 2, where(gt(a, b), g, 0.0))};
                         })},
      {"div", binary([](double a, double b) { return a / b; }, {-4, 4}, {0.25, 4},
                     [](T g, T a, T b, T) {
                       return Grads{g / b, -g * a / (b * b)};
                     })},
      // A positive base: the gradient in the exponent takes its log.
      {"pow", binary([](double a, double b) { return std::pow(a, b); }, {0.25, 2.5}, {-2, 2},
                     [](T g, T a, T b, T) {
                       return Grads{where(eq(b, 0), 0.0, g * b * pow(a, b - 1)),
                                    where(logical_and(eq(a, 0), ge(b, 0)), 0.0, g * pow(a, b) * log(a))};
                     })},
      // Logits against targets in [0, 1].
      {"binary_cross_entropy_with_logits", binary(bce_with_logits_ref, {-3, 3}, {0, 1},
                                                  [](T g, T a, T b, T) {
                                                    return Grads{g * (sigmoid(a) - b), -g * a};
                                                  })},
      {"eq", binary([](double a, double b) -> double { return a == b; }, compared, compared)},
      {"ne", binary([](double a, double b) -> double { return a != b; }, compared, compared)},
      {"lt", binary([](double a, double b) -> double { return a < b; }, compared, compared)},
      {"le", binary([](double a, double b) -> double { return a <= b; }, compared, compared)},
      {"gt", binary([](double a, double b) -> double { return a > b; }, compared, compared)},
      {"ge", binary([](double a, double b) -> double { return a >= b; }, compared, compared)},
      // -1, 0 and 1: zeros and non-zeros of either sign.
      {"logical_and",
       binary([](double a, double b) -> double { return a != 0 && b != 0; }, {-1, 2, {}, true}, {-1, 2, {}, true})},
      {"logical_or",
       binary([](double a, double b) -> double { return a != 0 || b != 0; }, {-1, 2, {}, true}, {-1, 2, {}, true})},
  };
  return *specs;
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "fatal in the OpInfo table: %s\n", message.c_str());
  std::abort();
}

// ---- The other entries, written by hand.
std::vector<Sample> reduction_samples() {
  return {sample({Shape{2, 3, 4}}), sample({Shape{6, 7, 9}}, SampleSize::kMedium),
          sample({Shape{4, 0, 5}}, SampleSize::kMedium)};
}

double ref_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double ref_abs_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::abs(x);
  return s;
}

OpInfo reduction(std::string name, bool is_mean, Shape dims, bool keepdim) {
  OpInfo info;
  info.name = std::move(name);
  info.op = [=](const std::vector<Tensor>& x) {
    return is_mean ? mean(x[0], dims, keepdim) : sum(x[0], dims, keepdim);
  };
  info.variable_op = [=](const Vars& x) {
    return is_mean ? autograd::mean(x[0], dims, keepdim) : autograd::sum(x[0], dims, keepdim);
  };
  const auto reduce_with = [=](double (*f)(const std::vector<double>&)) {
    return [=](const std::vector<Ref>& x) {
      return ref_reduce(x[0], dims, keepdim,
                        [&](const std::vector<double>& group) { return is_mean ? f(group) / group.size() : f(group); });
    };
  };
  info.reference = reduce_with(ref_sum);
  info.magnitude = reduce_with(ref_abs_sum);
  info.domains = {{-1, 1}};
  info.samples = reduction_samples();
  // Integer and bool sums give i64, their means f32.
  info.dtypes = {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kBool};
  info.result_dtype = [is_mean](DType d) { return is_floating(d) ? d : is_mean ? DType::kF32 : DType::kI64; };
  return info;
}

OpInfo softmax_entry(std::string name, bool is_log, int64_t dim) {
  OpInfo info;
  info.name = std::move(name);
  info.op = [=](const std::vector<Tensor>& x) { return is_log ? log_softmax(x[0], dim) : softmax(x[0], dim); };
  info.variable_op = [=](const Vars& x) {
    return is_log ? autograd::log_softmax(x[0], dim) : autograd::softmax(x[0], dim);
  };
  info.reference = [=](const std::vector<Ref>& x) { return ref_softmax(x[0], dim, is_log); };
  info.domains = {{-3, 3}};
  info.samples = {sample({Shape{3, 5}}), sample({Shape{4, 33, 5}}, SampleSize::kMedium)};
  info.dtypes = kFloatingDTypes;
  info.result_dtype = [](DType d) { return d; };
  // log_softmax subtracts log(sum) from each logit: its error scales with
  // the logits (up to 3 here), not with the result, which can be near 0.
  if (is_log) info.floor = 1;
  return info;
}

OpInfo matmul_entry() {
  OpInfo info;
  info.name = "matmul";
  info.op = [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); };
  info.variable_op = [](const Vars& x) { return autograd::matmul(x[0], x[1]); };
  info.reference = [](const std::vector<Ref>& x) { return ref_matmul(x[0], x[1]).first; };
  info.magnitude = [](const std::vector<Ref>& x) { return ref_matmul(x[0], x[1]).second; };
  info.domains = {{-1, 1}, {-1, 1}};
  using S = Shape;
  info.samples = {sample({S{3, 4}, S{4, 2}}),        // matrices
                  sample({S{2, 3, 4}, S{2, 4, 5}}),  // batched
                  sample({S{2, 3, 4}, S{4, 5}}),     // batch broadcast on the right
                  sample({S{3, 4}, S{2, 4, 5}}),     // and on the left
                  sample({S{4}, S{4, 3}}),           // vector @ matrix
                  sample({S{3, 4}, S{4}}),           // matrix @ vector
                  sample({S{4}, S{4}}),              // dot product
                  sample({S{4}, S{2, 4, 3}}),        // vector @ batch
                  sample({S{2, 1, 3, 4}, S{5, 4, 6}}, SampleSize::kMedium),
                  sample({S{33, 65}, S{65, 17}}, SampleSize::kMedium)};
  info.dtypes = kFloatingDTypes;
  info.result_dtype = [](DType d) { return d; };
  return info;
}

OpInfo where_entry() {
  OpInfo info;
  info.name = "where";
  info.op = [](const std::vector<Tensor>& x) { return where(x[0], x[1], x[2]); };
  info.variable_op = [](const Vars& x) { return autograd::where(x[0].data(), x[1], x[2]); };
  info.reference = [](const std::vector<Ref>& x) {
    const Shape shape = broadcast_shapes("where", broadcast_shapes("where", x[0].shape, x[1].shape), x[2].shape);
    const Ref c = ref_expand(x[0], shape), a = ref_expand(x[1], shape), b = ref_expand(x[2], shape);
    Ref out = c;
    for (int64_t i = 0; i < out.numel(); ++i) out.v[i] = c.v[i] != 0 ? a.v[i] : b.v[i];
    return out;
  };
  info.domains = {{.dtype = DType::kBool}, {-3, 3}, {-3, 3}};
  using S = Shape;
  info.samples = {sample({S{2, 3}, S{2, 3}, S{2, 3}}), sample({S{2, 3}, S{2, 3}, S{3}}), sample({S{4}, S{}, S{4}}),
                  sample({S{5, 1, 4}, S{3, 4}, S{1, 3, 1}}, SampleSize::kMedium)};
  info.dtypes = std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes));
  info.result_dtype = [](DType d) { return d; };
  return info;
}

constexpr double kMaskedFillValue = -7;

OpInfo masked_fill_entry() {
  OpInfo info;
  info.name = "masked_fill";
  info.op = [](const std::vector<Tensor>& x) { return masked_fill(x[0], x[1], kMaskedFillValue); };
  info.variable_op = [](const Vars& x) { return autograd::masked_fill(x[0], x[1].data(), kMaskedFillValue); };
  info.reference = [](const std::vector<Ref>& x) {
    return ref_zip(x[0], x[1], [](double v, double m) { return m != 0 ? kMaskedFillValue : v; });
  };
  info.domains = {{-3, 3}, {.dtype = DType::kBool}};
  using S = Shape;
  info.samples = {sample({S{2, 3}, S{2, 3}}), sample({S{2, 3}, S{3}}), sample({S{6, 5}, S{5}}, SampleSize::kMedium)};
  // Not u8, which cannot hold the fill value.
  info.dtypes = {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI32, DType::kI64};
  info.result_dtype = [](DType d) { return d; };
  return info;
}

OpInfo clamp_entry(std::string name, std::optional<double> lo, std::optional<double> hi) {
  OpInfo info;
  info.name = std::move(name);
  const std::optional<Scalar> lower = lo ? std::optional<Scalar>(*lo) : std::nullopt;
  const std::optional<Scalar> upper = hi ? std::optional<Scalar>(*hi) : std::nullopt;
  info.op = [=](const std::vector<Tensor>& x) { return clamp(x[0], lower, upper); };
  info.variable_op = [=](const Vars& x) { return autograd::clamp(x[0], lower, upper); };
  // NaN stays NaN.
  info.reference = [=](const std::vector<Ref>& x) {
    return ref_map(x[0], [=](double v) { return lo && v < *lo ? *lo : hi && v > *hi ? *hi : v; });
  };
  Domain domain{-2, 2};
  if (lo) domain.kinks.push_back(*lo);
  if (hi) domain.kinks.push_back(*hi);
  info.domains = {domain};
  info.samples = {sample({Shape{2, 3}}), sample({Shape{9, 37}}, SampleSize::kMedium)};
  info.dtypes = kFloatingDTypes;
  info.result_dtype = [](DType d) { return d; };
  return info;
}

std::vector<OpInfo> build_table() {
  std::vector<OpInfo> table;
  const std::map<std::string, RowSpec>& specs = row_specs();
  for (const Row& row : rows()) {
    const auto it = specs.find(row.name);
    // A row without a spec gets no entry: cpu_vs_f64_test's completeness
    // check names it.
    if (it == specs.end()) continue;
    const RowSpec& spec = it->second;
    OpInfo info;
    info.name = row.name;
    info.op = row.op;
    info.op_with_scalar = row.op_with_scalar;
    info.variable_op = row.variable_op;
    info.variable_op_with_scalar = row.variable_op_with_scalar;
    info.reference = spec.reference;
    info.domains = spec.domains;
    info.samples = row.unary_op ? unary_samples() : binary_samples();
    info.dtypes = dtypes_of(row.rule);
    info.result_dtype = result_dtype_of(row.rule);
    info.unary_op = row.unary_op;
    info.binary_op = row.binary_op;
    info.composed_grad = spec.composed_grad;
    info.tolerance_overrides = spec.tolerance_overrides;
    if (info.domains.size() != (row.unary_op ? 1u : 2u)) die(absl::StrCat(row.name, ": one domain per operand"));
    if (static_cast<bool>(info.composed_grad) != info.differentiable()) {
      die(absl::StrCat(row.name, ": a composed gradient exactly for the differentiable rows"));
    }
    table.push_back(std::move(info));
  }
  for (const auto& [name, spec] : specs) {
    const bool has_row =
        std::any_of(rows().begin(), rows().end(), [&name = name](const Row& row) { return name == row.name; });
    if (!has_row) die(absl::StrCat("\"", name, "\" names no row of tensor/op_table.h"));
  }

  table.push_back(reduction("sum", false, {}, false));
  table.push_back(reduction("sum_dim_1", false, {1}, false));
  table.push_back(reduction("sum_dims_0_2_keepdim", false, {0, 2}, true));
  table.push_back(reduction("mean", true, {}, false));
  table.push_back(reduction("mean_dim_last", true, {-1}, false));
  table.push_back(reduction("mean_dim_0_keepdim", true, {0}, true));
  for (bool is_log : {false, true}) {
    const std::string op = is_log ? "log_softmax" : "softmax";
    table.push_back(softmax_entry(op + "_dim_0", is_log, 0));
    table.push_back(softmax_entry(op + "_dim_1", is_log, 1));
    table.push_back(softmax_entry(op + "_dim_last", is_log, -1));
  }
  table.push_back(matmul_entry());
  table.push_back(where_entry());
  table.push_back(masked_fill_entry());
  // The gradient flows where min <= x <= max: the bounds are kinks.
  table.push_back(clamp_entry("clamp", -0.5, 0.5));
  table.push_back(clamp_entry("clamp_min", 0.1, std::nullopt));
  return table;
}

// Values of `t` (any layout) rewritten in place by f.
void rewrite(const Tensor& t, const std::function<void(std::vector<double>&)>& f) {
  std::vector<double> values = to_vector<double>(t);
  f(values);
  copy_(t, from_vector<double>(values, t.shape()));
}

double away_from_kinks(double x, const std::vector<double>& kinks, double gap) {
  for (double k : kinks) {
    if (std::abs(x - k) < gap) x = x < k ? k - gap : k + gap;
  }
  return x;
}

// The range an integer (or whole-number) input is drawn from: whole numbers
// at least lo, none negative for u8.
std::pair<double, double> whole_range(const Domain& domain, DType dtype) {
  double lo = std::ceil(domain.lo);
  if (dtype == DType::kU8) lo = std::max(lo, 0.0);
  return {lo, std::max(lo, domain.hi)};
}

Tensor make_tensor(std::mt19937_64& rng, const Shape& shape, DType dtype, const Domain& domain, Layout layout) {
  const bool whole = !is_floating(dtype) || domain.whole;
  const auto [lo, hi] = whole ? whole_range(domain, dtype) : std::make_pair(domain.lo, domain.hi);
  const Tensor t = random_tensor(rng, shape, dtype, lo, hi, layout);
  if (is_floating(dtype) && (domain.whole || !domain.kinks.empty())) {
    rewrite(t, [&](std::vector<double>& values) {
      for (double& v : values) v = domain.whole ? std::floor(v) : away_from_kinks(v, domain.kinks, kKinkGap);
    });
  }
  return t;
}

Scalar make_scalar(std::mt19937_64& rng, DType dtype, const Domain& domain) {
  if (dtype == DType::kBool) return Scalar(std::bernoulli_distribution(0.5)(rng));
  if (is_integral(dtype) || domain.whole) {
    const auto [lo, hi] = whole_range(domain, dtype);
    const double v = std::floor(std::uniform_real_distribution<double>(lo, hi)(rng));
    if (is_integral(dtype)) return Scalar(static_cast<int64_t>(v));
    return Scalar(v);
  }
  // A multiple of 1/8 inside the domain (and 1/8 away from its kinks).
  constexpr double kStep = 0.125;
  const double lo = std::ceil(domain.lo / kStep) * kStep, hi = std::floor(domain.hi / kStep) * kStep;
  double v = std::round(std::uniform_real_distribution<double>(lo, hi)(rng) / kStep) * kStep;
  v = away_from_kinks(v, domain.kinks, kStep);
  return Scalar(v);
}

Ref scalar_ref(const Scalar& s) { return Ref{{}, {s.to_double()}}; }

}  // namespace

double OpInfo::tolerance_for(DType result) const {
  const auto it = tolerance_overrides.find(result);
  return it != tolerance_overrides.end() ? it->second : tolerance(result);
}

const std::vector<OpInfo>& op_infos() {
  static const auto* table = new std::vector<OpInfo>(build_table());
  return *table;
}

const OpInfo* find_op_info(absl::string_view name) {
  for (const OpInfo& info : op_infos()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::vector<std::string> op_info_names(bool (*which)(const OpInfo&)) {
  std::vector<std::string> names;
  for (const OpInfo& info : op_infos()) {
    if (!which || which(info)) names.push_back(info.name);
  }
  return names;
}

std::vector<Operand> SampleInputs::operands(const std::vector<Tensor>& on_device) const {
  const size_t n = on_device.size() + (scalar ? 1 : 0);
  std::vector<Operand> out;
  out.reserve(n);
  for (size_t i = 0, t = 0; i < n; ++i) {
    if (static_cast<int>(i) == scalar_operand) {
      out.emplace_back(*scalar);
    } else {
      out.emplace_back(on_device.at(t++));
    }
  }
  return out;
}

std::vector<Tensor> SampleInputs::operands_f64() const {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(to(t, DType::kF64));
  if (scalar) out.insert(out.begin() + scalar_operand, scalar_tensor(*scalar, {DType::kF64}));
  return out;
}

std::vector<Ref> SampleInputs::refs() const {
  std::vector<Ref> out;
  for (const Tensor& t : tensors) out.push_back(ref_of(t));
  if (scalar) out.insert(out.begin() + scalar_operand, scalar_ref(*scalar));
  return out;
}

SampleInputs make_inputs(std::mt19937_64& rng, const OpInfo& info, const Sample& sample, DType dtype, Layout layout) {
  return make_inputs(rng, info, sample, dtype, std::vector<Layout>(sample.shapes.size(), layout));
}

SampleInputs make_inputs(std::mt19937_64& rng, const OpInfo& info, const Sample& sample, DType dtype,
                         const std::vector<Layout>& layouts) {
  SampleInputs inputs;
  inputs.scalar_operand = sample.scalar_operand;
  for (size_t i = 0; i < sample.shapes.size(); ++i) {
    // Operand i, counting the Scalar.
    const size_t operand = sample.scalar_operand >= 0 && static_cast<int>(i) >= sample.scalar_operand ? i + 1 : i;
    const Domain& domain = info.domains.at(operand);
    inputs.tensors.push_back(make_tensor(rng, sample.shapes[i], domain.dtype.value_or(dtype), domain, layouts.at(i)));
  }
  if (sample.scalar_operand >= 0) {
    inputs.scalar = make_scalar(rng, dtype, info.domains.at(sample.scalar_operand));
  }
  return inputs;
}

Tensor run(const OpInfo& info, const SampleInputs& inputs, const std::vector<Tensor>& tensors) {
  if (!inputs.scalar) return info.op(tensors);
  return info.op_with_scalar(tensors.at(0), *inputs.scalar, inputs.scalar_operand);
}

Variable run_variable(const OpInfo& info, const SampleInputs& inputs, const std::vector<Variable>& variables) {
  if (!inputs.scalar) return info.variable_op(variables);
  return info.variable_op_with_scalar(variables.at(0), *inputs.scalar, inputs.scalar_operand);
}

Ref reference(const OpInfo& info, const SampleInputs& inputs) { return info.reference(inputs.refs()); }

std::string describe(const OpInfo& info, const Sample& sample, DType dtype, const SampleInputs* inputs,
                     const std::string& extra) {
  std::vector<std::string> operands;
  for (const Shape& shape : sample.shapes) operands.push_back(shape_str(shape));
  if (sample.scalar_operand >= 0) {
    operands.insert(operands.begin() + sample.scalar_operand,
                    inputs && inputs->scalar ? "scalar " + inputs->scalar->to_string() : "scalar");
  }
  return absl::StrCat(info.name, " ", dtype_name(dtype), " ", absl::StrJoin(operands, " x "), extra.empty() ? "" : ", ",
                      extra);
}

}  // namespace ts::testing
