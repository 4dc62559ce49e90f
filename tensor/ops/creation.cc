// Creation ops: constant fills, ranges, host data and random tensors.
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "tensor/backend.h"
#include "tensor/ops.h"
#include "tensor/ops/checks.h"
#include "tensor/status_macros.h"

namespace ts {

absl::StatusOr<Tensor> empty(Dims shape, TensorOptions options) {
  return Tensor::allocate(shape, options.dtype, options.device);
}

absl::StatusOr<Tensor> full(Dims shape, const Scalar& value, TensorOptions options) {
  ASSIGN_OR_RETURN(Tensor out, empty(shape, options));
  RETURN_IF_ERROR(fill_(out, value));
  return out;
}

absl::StatusOr<Tensor> zeros(Dims shape, TensorOptions options) { return full(shape, 0, options); }

absl::StatusOr<Tensor> ones(Dims shape, TensorOptions options) { return full(shape, 1, options); }

absl::StatusOr<Tensor> arange(double start, double end, double step, TensorOptions options) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step) ||
      (end - start) / step < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("arange: cannot step from ", start, " to ", end, " by ", step));
  }
  const int64_t n = static_cast<int64_t>(std::ceil((end - start) / step));
  ASSIGN_OR_RETURN(Tensor out, empty({n}, options));
  if (n > 0) RETURN_IF_ERROR(backend_for(out.device()).arange(out, start, step));
  return out;
}

template <typename T>
absl::StatusOr<Tensor> from_vector(absl::Span<const T> values, Dims shape, Device device) {
  if (shape_numel(shape) != static_cast<int64_t>(values.size())) {
    return absl::InvalidArgumentError(absl::StrCat("from_vector: ", values.size(),
                                                   " values do not fill shape ", shape_str(shape)));
  }
  ASSIGN_OR_RETURN(Tensor host, empty(shape, {dtype_of<T>, Device::cpu()}));
  if (!values.empty()) std::memcpy(host.raw_data(), values.data(), values.size() * sizeof(T));
  return to(host, device);
}

template absl::StatusOr<Tensor> from_vector(absl::Span<const bool>, Dims, Device);
template absl::StatusOr<Tensor> from_vector(absl::Span<const uint8_t>, Dims, Device);
template absl::StatusOr<Tensor> from_vector(absl::Span<const int32_t>, Dims, Device);
template absl::StatusOr<Tensor> from_vector(absl::Span<const int64_t>, Dims, Device);
template absl::StatusOr<Tensor> from_vector(absl::Span<const Half>, Dims, Device);
template absl::StatusOr<Tensor> from_vector(absl::Span<const BFloat16>, Dims, Device);
template absl::StatusOr<Tensor> from_vector(absl::Span<const float>, Dims, Device);
template absl::StatusOr<Tensor> from_vector(absl::Span<const double>, Dims, Device);

namespace {

// Counters a random op over n elements consumes: one Philox call per group of
// four 32-bit values (two for f64).
uint64_t philox_groups(int64_t n, DType dtype) {
  const int64_t per_group = dtype == DType::kF64 ? 2 : 4;
  return static_cast<uint64_t>((n + per_group - 1) / per_group);
}

absl::StatusOr<Tensor> random_tensor(absl::string_view op, RandomKind kind, Dims shape, double a,
                                     double b, TensorOptions options, Generator* generator) {
  if (!is_floating(options.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": expects a floating dtype, got ",
                                                   dtype_name(options.dtype)));
  }
  ASSIGN_OR_RETURN(Tensor out, empty(shape, options));
  if (out.numel() == 0) return out;
  Generator& g = generator != nullptr ? *generator : default_generator();
  const PhiloxKey key = g.reserve(philox_groups(out.numel(), options.dtype));
  RETURN_IF_ERROR(backend_for(out.device()).random(kind, out, key, a, b, Tensor()));
  return out;
}

}  // namespace

absl::StatusOr<Tensor> rand(Dims shape, TensorOptions options, Generator* generator) {
  return random_tensor("rand", RandomKind::kUniform, shape, 0, 1, options, generator);
}

absl::StatusOr<Tensor> uniform(Dims shape, double low, double high, TensorOptions options,
                               Generator* generator) {
  if (!(low <= high)) {
    return absl::InvalidArgumentError(absl::StrCat("uniform: low ", low, " exceeds high ", high));
  }
  return random_tensor("uniform", RandomKind::kUniform, shape, low, high, options, generator);
}

absl::StatusOr<Tensor> randn(Dims shape, TensorOptions options, Generator* generator) {
  return random_tensor("randn", RandomKind::kNormal, shape, 0, 1, options, generator);
}

absl::StatusOr<Tensor> normal(Dims shape, double mean, double stddev, TensorOptions options,
                              Generator* generator) {
  if (!(stddev >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("normal: stddev must be >= 0, got ", stddev));
  }
  return random_tensor("normal", RandomKind::kNormal, shape, mean, stddev, options, generator);
}

absl::StatusOr<Tensor> bernoulli(const Tensor& probs, Generator* generator) {
  RETURN_IF_ERROR(ops_internal::check_floating("bernoulli", probs));
  ASSIGN_OR_RETURN(Tensor p, contiguous(probs));
  ASSIGN_OR_RETURN(Tensor out, empty(p.shape(), {p.dtype(), p.device()}));
  if (out.numel() == 0) return out;
  Generator& g = generator != nullptr ? *generator : default_generator();
  const PhiloxKey key = g.reserve(philox_groups(out.numel(), out.dtype()));
  RETURN_IF_ERROR(backend_for(out.device()).random(RandomKind::kBernoulli, out, key, 0, 0, p));
  return out;
}

absl::StatusOr<Tensor> bernoulli(Dims shape, double p, TensorOptions options, Generator* generator) {
  if (!(p >= 0 && p <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("bernoulli: p must be in [0, 1], got ", p));
  }
  // Uniform draws u in [0, 1): u < p has probability exactly p.
  return random_tensor("bernoulli", RandomKind::kBernoulli, shape, p, 0, options, generator);
}

}  // namespace ts
