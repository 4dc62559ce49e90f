// Creation ops: constant fills, ranges, host data and random tensors.
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "tensor/backend.h"
#include "tensor/checks.h"
#include "tensor/ops.h"

namespace ts {

Tensor empty(Dims shape, TensorOptions options) {
  return Tensor::allocate(shape, options.dtype, options.device, options.memory_format);
}

Tensor full(Dims shape, const Scalar& value, TensorOptions options) {
  Tensor out = empty(shape, options);
  fill_(out, value);
  return out;
}

Tensor zeros(Dims shape, TensorOptions options) { return full(shape, 0, options); }

Tensor ones(Dims shape, TensorOptions options) { return full(shape, 1, options); }

Tensor zeros_like(const Tensor& like) {
  return zeros(like.shape(), {like.dtype(), like.device(), like.suggest_memory_format()});
}

Tensor ones_like(const Tensor& like) {
  return ones(like.shape(), {like.dtype(), like.device(), like.suggest_memory_format()});
}

Tensor scalar_tensor(const Scalar& value, TensorOptions options) { return full({}, value, options); }

Tensor arange(double start, double end, double step, TensorOptions options) {
  TS_CHECK(step != 0 && std::isfinite(start) && std::isfinite(end) && std::isfinite(step) && (end - start) / step >= 0,
           "arange: cannot step from ", start, " to ", end, " by ", step);
  const int64_t n = static_cast<int64_t>(std::ceil((end - start) / step));
  Tensor out = empty({n}, options);
  if (n > 0) backend_for(out.device()).arange(out, start, step);
  return out;
}

template <typename T>
Tensor from_vector(absl::Span<const T> values, Dims shape, Device device) {
  TS_CHECK(shape_numel(shape) == static_cast<int64_t>(values.size()), "from_vector: ", values.size(),
           " values do not fill shape ", shape_str(shape));
  Tensor host = empty(shape, {dtype_of<T>, Device::cpu()});
  if (!values.empty()) std::memcpy(host.raw_data(), values.data(), values.size() * sizeof(T));
  return to(host, device);
}

template Tensor from_vector(absl::Span<const bool>, Dims, Device);
template Tensor from_vector(absl::Span<const uint8_t>, Dims, Device);
template Tensor from_vector(absl::Span<const int32_t>, Dims, Device);
template Tensor from_vector(absl::Span<const int64_t>, Dims, Device);
template Tensor from_vector(absl::Span<const Half>, Dims, Device);
template Tensor from_vector(absl::Span<const BFloat16>, Dims, Device);
template Tensor from_vector(absl::Span<const float>, Dims, Device);
template Tensor from_vector(absl::Span<const double>, Dims, Device);

namespace {

// Counters a random op over n elements consumes: one Philox call per group of
// four 32-bit values (two for f64).
uint64_t philox_groups(int64_t n, DType dtype) {
  const int64_t per_group = dtype == DType::kF64 ? 2 : 4;
  return static_cast<uint64_t>((n + per_group - 1) / per_group);
}

Tensor random_tensor(absl::string_view op, RandomKind kind, Dims shape, double a, double b, TensorOptions options,
                     Generator* generator) {
  TS_CHECK(is_floating(options.dtype), op, ": expects a floating dtype, got ", dtype_name(options.dtype));
  Tensor out = empty(shape, options);
  if (out.numel() == 0) return out;
  Generator& g = generator != nullptr ? *generator : default_generator();
  const PhiloxKey key = g.reserve(philox_groups(out.numel(), options.dtype));
  backend_for(out.device()).random(kind, out, key, a, b, Tensor());
  return out;
}

}  // namespace

Tensor rand(Dims shape, TensorOptions options, Generator* generator) {
  return random_tensor("rand", RandomKind::kUniform, shape, 0, 1, options, generator);
}

Tensor uniform(Dims shape, double low, double high, TensorOptions options, Generator* generator) {
  TS_CHECK(low <= high, "uniform: low ", low, " exceeds high ", high);
  return random_tensor("uniform", RandomKind::kUniform, shape, low, high, options, generator);
}

Tensor randn(Dims shape, TensorOptions options, Generator* generator) {
  return random_tensor("randn", RandomKind::kNormal, shape, 0, 1, options, generator);
}

Tensor normal(Dims shape, double mean, double stddev, TensorOptions options, Generator* generator) {
  TS_CHECK(stddev >= 0, "normal: stddev must be >= 0, got ", stddev);
  return random_tensor("normal", RandomKind::kNormal, shape, mean, stddev, options, generator);
}

Tensor bernoulli(const Tensor& probs, Generator* generator) {
  check_floating("bernoulli", probs);
  const Tensor p = contiguous(probs);
  Tensor out = empty(p.shape(), {p.dtype(), p.device()});
  if (out.numel() == 0) return out;
  // As PyTorch: a probability outside [0, 1] (or NaN, from a model that
  // diverged) is an error, not a draw of 0 or 1. Two host reads per call;
  // dropout draws from a scalar probability and pays none.
  const double lowest = item<double>(min(p)), highest = item<double>(max(p));
  TS_CHECK(lowest >= 0 && highest <= 1, "bernoulli: probabilities must be in [0, 1], got values from ", lowest, " to ",
           highest, " in ", probs.describe());
  Generator& g = generator != nullptr ? *generator : default_generator();
  const PhiloxKey key = g.reserve(philox_groups(out.numel(), out.dtype()));
  backend_for(out.device()).random(RandomKind::kBernoulli, out, key, 0, 0, p);
  return out;
}

Tensor bernoulli(Dims shape, double p, TensorOptions options, Generator* generator) {
  TS_CHECK(p >= 0 && p <= 1, "bernoulli: p must be in [0, 1], got ", p);
  // Uniform draws u in [0, 1): u < p has probability exactly p.
  return random_tensor("bernoulli", RandomKind::kBernoulli, shape, p, 0, options, generator);
}

}  // namespace ts
