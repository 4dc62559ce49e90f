// CPU batch normalization in training mode, threaded over channels. Sums
// accumulate in double and the variance is two-pass (no cancellation), so f32
// results are as exact as f32 can hold, also for activations far from zero
// relative to their spread: x - mean is formed against the mean split into
// two T values (CenteredBy), never as x * scale + shift, whose two terms
// would cancel. Row-major x is walked a channel at a time (its values are n
// contiguous runs); channels-last x row by row, every channel of a row a
// vector lane. Either way each channel sums in one fixed order, whatever the
// thread count, and the same bits in the loops' baseline and AVX2 clones
// (tensor/cpu/isa.h). The forward hands the backward its means (the
// reserve), so the backward reads x twice, not three times.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "nn/functional/cpu/cpu_kernels.h"
#include "tensor/cpu/isa.h"
#include "tensor/cpu/lanes.h"
#include "tensor/cpu/parallel.h"

namespace ts::nn::functional {
namespace {

// x viewed as [n, c, plane]: a channel's values are n contiguous runs.
struct ChannelLayout {
  int64_t n, c, plane;
  int64_t offset(int64_t image, int64_t channel) const { return (image * c + channel) * plane; }
};

ChannelLayout layout_of(const Tensor& x) {
  int64_t plane = 1;
  for (int64_t d = 2; d < x.dim(); ++d) plane *= x.size(d);
  return {x.size(0), x.size(1), plane};
}

// A channel's mean as an unevaluated sum hi + lo of doubles: lo holds what a
// double near 1e8 cannot (its spacing there is 1.5e-8), so that x - mean
// stays exact to the last bit of f64 data far from zero.
struct Mean {
  double hi, lo;
};

// A mean summed as offsets from a shift, the channel's first value (the
// shifted data algorithm): for values 1e8 +- 1 a plain double sum would carry
// an error of about sqrt(count) * 1e-8 into the mean; the offsets are small
// and, for values near the first, exact (Sterbenz). shift + offset is split
// into hi + lo without loss (Knuth's TwoSum).
Mean shifted_mean(double shift, double offset_sum, double count) {
  const double offset = offset_sum / count;
  const double hi = shift + offset;
  const double offset_part = hi - shift;
  const double lo = (shift - (hi - offset_part)) + (offset - offset_part);
  return {hi, lo};
}

template <typename T>
TS_INLINE_INTO_CLONE inline Mean channel_mean(const T* px, const ChannelLayout& l, int64_t ch) {
  const double shift = px[l.offset(0, ch)];
  double sum = 0;
  for (int64_t i = 0; i < l.n; ++i) {
    const T* v = px + l.offset(i, ch);
    sum += cpu::lane_sum(l.plane, [&](int64_t j) TS_INLINE_INTO_CLONE { return static_cast<double>(v[j]) - shift; });
  }
  return shifted_mean(shift, sum, static_cast<double>(l.n * l.plane));
}

// v - mean in U to within U's rounding of the difference: the mean is
// rounded to hi + lo in U; v - hi is exact for v near the mean (Sterbenz),
// then lo is taken off.
template <typename U>
struct CenteredBy {
  explicit CenteredBy(const Mean& mean)
      : hi(static_cast<U>(mean.hi)), lo(static_cast<U>((mean.hi - static_cast<double>(hi)) + mean.lo)) {}
  U operator()(U v) const { return (v - hi) - lo; }
  U hi, lo;
};

// The reserve: every channel's mean, hi parts in row 0 and lo parts in row
// 1 of a [2, c] f64 tensor (save_mean holds only the mean rounded to T,
// which for |mean| >> std would shift every xhat of the channel).
Tensor allocate_means(int64_t c) { return Tensor::allocate({2, c}, DType::kF64, Device::cpu()); }
void store_mean(const Tensor& means, int64_t ch, const Mean& mean) {
  double* m = means.data<double>();
  m[ch] = mean.hi;
  m[means.size(1) + ch] = mean.lo;
}
Mean load_mean(const Tensor& means, int64_t ch) {
  const double* m = means.data<double>();
  return {m[ch], m[means.size(1) + ch]};
}

// What the forward writes for channel ch once its mean and sum of squared
// deviations are known (the saved mean and 1 / std, the running statistics),
// and the normalization's per-channel scale and shift: y = (x - mean) *
// scale + shift.
template <typename T>
struct Affine {
  T scale, shift;
};
template <typename T>
Affine<T> finish_forward(int64_t ch, const Mean& mean, double squares, double count, const Tensor& weight,
                         const Tensor& bias, const Tensor& running_mean, const Tensor& running_var, double momentum,
                         double eps, const Tensor& save_mean, const Tensor& save_invstd) {
  const double var = squares / count;
  const double invstd = 1.0 / std::sqrt(var + eps);
  save_mean.data<T>()[ch] = static_cast<T>(mean.hi);
  save_invstd.data<T>()[ch] = static_cast<T>(invstd);
  T* rm = running_mean.data<T>() + ch;
  T* rv = running_var.data<T>() + ch;
  *rm = static_cast<T>((1 - momentum) * *rm + momentum * mean.hi);
  *rv = static_cast<T>((1 - momentum) * *rv + momentum * var * count / (count - 1));
  return {static_cast<T>((weight.defined() ? weight.data<T>()[ch] : 1.0) * invstd),
          bias.defined() ? bias.data<T>()[ch] : T(0)};
}

// What the backward writes for channel ch from sum(dy) and sum(dy * (x -
// mean)) (dw = sum(dy * xhat), db = sum(dy)), and the coefficients of
// dx = a * dy + b * (x - mean) + c.
template <typename T>
struct GradCoefficients {
  T a, b, c;
};
template <typename T>
GradCoefficients<T> finish_backward(int64_t ch, double sum_dy, double sum_dy_xmu, double count, const Tensor& weight,
                                    const Tensor& save_invstd, const Tensor& grad_weight, const Tensor& grad_bias) {
  const double invstd = save_invstd.data<T>()[ch];
  grad_weight.data<T>()[ch] = static_cast<T>(sum_dy_xmu * invstd);
  grad_bias.data<T>()[ch] = static_cast<T>(sum_dy);
  const double a = (weight.defined() ? weight.data<T>()[ch] : 1.0) * invstd;
  return {static_cast<T>(a), static_cast<T>(-a * invstd * invstd * sum_dy_xmu / count),
          static_cast<T>(-a * sum_dy / count)};
}

template <typename T>
void forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                      const Tensor& running_var, double momentum, double eps, const Tensor& y, const Tensor& save_mean,
                      const Tensor& save_invstd, const Tensor& means) {
  const ChannelLayout l = layout_of(x);
  const double count = static_cast<double>(l.n * l.plane);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  cpu::parallel_for_widest(l.c, 1, [&](int64_t begin, int64_t end) TS_INLINE_INTO_CLONE {
    for (int64_t ch = begin; ch < end; ++ch) {
      const Mean mean = channel_mean(px, l, ch);
      store_mean(means, ch, mean);
      const CenteredBy<double> centered_f64(mean);
      double sq = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        sq += cpu::lane_sum(l.plane, [&](int64_t j) TS_INLINE_INTO_CLONE {
          const double d = centered_f64(v[j]);
          return d * d;
        });
      }
      const Affine<T> affine = finish_forward<T>(ch, mean, sq, count, weight, bias, running_mean, running_var, momentum,
                                                 eps, save_mean, save_invstd);
      const CenteredBy<T> centered(mean);
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        T* out = py + l.offset(i, ch);
        for (int64_t j = 0; j < l.plane; ++j) out[j] = centered(v[j]) * affine.scale + affine.shift;
      }
    }
  });
}

// dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)), with
// xhat = (x - mean) * invstd; dw = sum(dy * xhat); db = sum(dy). The mean is
// the forward's unrounded one (the reserve), and sum(dy * (x - mean)) is
// summed over the centered values: the one-pass form
// sum(dy * x) - mean * sum(dy) cancels when |mean| >> std (at 1e8 it lost
// all but 7 digits of dw in f64).
template <typename T>
void backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight, const Tensor& save_invstd,
                       const Tensor& means, const Tensor& grad_x, const Tensor& grad_weight, const Tensor& grad_bias) {
  const ChannelLayout l = layout_of(x);
  const double count = static_cast<double>(l.n * l.plane);
  const T* px = x.data<T>();
  const T* pg = grad_y.data<T>();
  T* pgx = grad_x.data<T>();
  cpu::parallel_for_widest(l.c, 1, [&](int64_t begin, int64_t end) TS_INLINE_INTO_CLONE {
    for (int64_t ch = begin; ch < end; ++ch) {
      const Mean mean = load_mean(means, ch);
      const CenteredBy<double> centered_f64(mean);
      double sum_dy = 0, sum_dy_xmu = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        const T* g = pg + l.offset(i, ch);
        sum_dy += cpu::lane_sum(l.plane, [&](int64_t j) TS_INLINE_INTO_CLONE { return static_cast<double>(g[j]); });
        sum_dy_xmu += cpu::lane_sum(
            l.plane, [&](int64_t j) TS_INLINE_INTO_CLONE { return static_cast<double>(g[j]) * centered_f64(v[j]); });
      }
      const GradCoefficients<T> k =
          finish_backward<T>(ch, sum_dy, sum_dy_xmu, count, weight, save_invstd, grad_weight, grad_bias);
      const CenteredBy<T> centered(mean);
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        const T* g = pg + l.offset(i, ch);
        T* out = pgx + l.offset(i, ch);
        for (int64_t j = 0; j < l.plane; ++j) out[j] = k.a * g[j] + k.b * centered(v[j]) + k.c;
      }
    }
  });
}

// Channels-last x viewed as [rows, c] (rows = n * d * h * w), walked row
// by row, so every read is sequential and the channels of a row are the
// independent lanes of the vector loops. Per-channel sums are taken per
// chunk of kRowChunk rows (its own partial sums, threaded over chunks) and
// the chunks' partials added in chunk order: a fixed order whatever the
// thread count.
constexpr int64_t kRowChunk = 64;

struct Rows {
  int64_t rows, c;
  int64_t chunks() const { return (rows + kRowChunk - 1) / kRowChunk; }
};

Rows rows_of(const Tensor& x) { return {x.numel() / x.size(1), x.size(1)}; }

// Runs body(row_begin, row_end) over every chunk of rows, threaded, body
// compiled for AVX2 where the CPU has it (tensor/cpu/isa.h: the same bits
// either way). Its lambda must be TS_INLINE_INTO_CLONE.
template <typename Body>
void for_each_chunk(const Rows& r, const Body& body) {
  cpu::parallel_for(r.chunks(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; ++chunk) {
      cpu::run_widest(body, chunk * kRowChunk, std::min(r.rows, (chunk + 1) * kRowChunk));
    }
  });
}

// K per-channel sums over all rows of term(row, ch), a std::array<double,
// K> (its lambda TS_INLINE_INTO_CLONE). Returns the K * c totals, sum k of
// channel ch at k * c + ch. Each chunk sums its rows with the channels as
// vector lanes, four rows at a time added in a tree before they reach the
// chunk's sums: those live in memory (K * c of them), and a sum in memory
// waits at every add for its own store of the add before.
template <int K, typename Term>
std::vector<double> column_sums(const Rows& r, const Term& term) {
  std::vector<double> partials(r.chunks() * K * r.c, 0.0);
  for_each_chunk(r, [&](int64_t begin, int64_t end) TS_INLINE_INTO_CLONE {
    double* sums = partials.data() + begin / kRowChunk * K * r.c;
    int64_t row = begin;
    for (; row + 4 <= end; row += 4) {
      for (int64_t ch = 0; ch < r.c; ++ch) {
        const std::array<double, K> t0 = term(row, ch), t1 = term(row + 1, ch), t2 = term(row + 2, ch),
                                    t3 = term(row + 3, ch);
        for (int k = 0; k < K; ++k) sums[k * r.c + ch] += (t0[k] + t1[k]) + (t2[k] + t3[k]);
      }
    }
    for (; row < end; ++row) {
      for (int64_t ch = 0; ch < r.c; ++ch) {
        const std::array<double, K> t = term(row, ch);
        for (int k = 0; k < K; ++k) sums[k * r.c + ch] += t[k];
      }
    }
  });
  std::vector<double> totals(K * r.c, 0.0);
  for (int64_t chunk = 0; chunk < r.chunks(); ++chunk) {
    const double* sums = partials.data() + chunk * K * r.c;
    for (int64_t i = 0; i < K * r.c; ++i) totals[i] += sums[i];
  }
  return totals;
}

// Every channel's mean as CenteredBy<double> holds it, hi and lo parts in
// separate arrays so the row loops vectorize.
struct CenteringF64 {
  std::vector<double> hi, lo;
  explicit CenteringF64(const std::vector<Mean>& means) : hi(means.size()), lo(means.size()) {
    for (size_t ch = 0; ch < means.size(); ++ch) {
      const CenteredBy<double> centered(means[ch]);
      hi[ch] = centered.hi, lo[ch] = centered.lo;
    }
  }
};

// Every channel's mean, as channel_mean takes it (offsets from the
// channel's first value).
template <typename T>
std::vector<Mean> channel_means(const T* px, const Rows& r) {
  const std::vector<double> shift(px, px + r.c);
  const double* sh = shift.data();
  const std::vector<double> offsets = column_sums<1>(r, [&](int64_t row, int64_t ch) TS_INLINE_INTO_CLONE {
    return std::array<double, 1>{static_cast<double>(px[row * r.c + ch]) - sh[ch]};
  });
  std::vector<Mean> means(r.c);
  for (int64_t ch = 0; ch < r.c; ++ch) means[ch] = shifted_mean(shift[ch], offsets[ch], static_cast<double>(r.rows));
  return means;
}

template <typename T>
void forward_training_channels_last(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                    const Tensor& running_mean, const Tensor& running_var, double momentum, double eps,
                                    const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd,
                                    const Tensor& reserve) {
  const Rows r = rows_of(x);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  const std::vector<Mean> means = channel_means(px, r);
  const CenteringF64 m(means);
  const double *hi = m.hi.data(), *lo = m.lo.data();
  const std::vector<double> squares = column_sums<1>(r, [&](int64_t row, int64_t ch) TS_INLINE_INTO_CLONE {
    const double d = (static_cast<double>(px[row * r.c + ch]) - hi[ch]) - lo[ch];
    return std::array<double, 1>{d * d};
  });
  // y = ((x - hi) - lo) * scale + shift, in T.
  std::vector<T> t_hi(r.c), t_lo(r.c), scale(r.c), shift(r.c);
  for (int64_t ch = 0; ch < r.c; ++ch) {
    store_mean(reserve, ch, means[ch]);
    const CenteredBy<T> centered(means[ch]);
    const Affine<T> affine = finish_forward<T>(ch, means[ch], squares[ch], static_cast<double>(r.rows), weight, bias,
                                               running_mean, running_var, momentum, eps, save_mean, save_invstd);
    t_hi[ch] = centered.hi, t_lo[ch] = centered.lo, scale[ch] = affine.scale, shift[ch] = affine.shift;
  }
  for_each_chunk(r, [&](int64_t begin, int64_t end) TS_INLINE_INTO_CLONE {
    for (int64_t row = begin; row < end; ++row) {
      const T* v = px + row * r.c;
      T* out = py + row * r.c;
      for (int64_t ch = 0; ch < r.c; ++ch) out[ch] = ((v[ch] - t_hi[ch]) - t_lo[ch]) * scale[ch] + shift[ch];
    }
  });
}

template <typename T>
void backward_training_channels_last(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                     const Tensor& save_invstd, const Tensor& reserve, const Tensor& grad_x,
                                     const Tensor& grad_weight, const Tensor& grad_bias) {
  const Rows r = rows_of(x);
  const T* px = x.data<T>();
  const T* pg = grad_y.data<T>();
  T* pgx = grad_x.data<T>();
  std::vector<Mean> means(r.c);
  for (int64_t ch = 0; ch < r.c; ++ch) means[ch] = load_mean(reserve, ch);
  const CenteringF64 m(means);
  const double *hi = m.hi.data(), *lo = m.lo.data();
  // sum(dy) in the first c, sum(dy * (x - mean)) in the next.
  const std::vector<double> sums = column_sums<2>(r, [&](int64_t row, int64_t ch) TS_INLINE_INTO_CLONE {
    const double dy = pg[row * r.c + ch];
    return std::array<double, 2>{dy, dy * ((static_cast<double>(px[row * r.c + ch]) - hi[ch]) - lo[ch])};
  });
  // dx = a * dy + b * ((x - hi) - lo) + c, in T.
  std::vector<T> t_hi(r.c), t_lo(r.c), a(r.c), b(r.c), c(r.c);
  for (int64_t ch = 0; ch < r.c; ++ch) {
    const CenteredBy<T> centered(means[ch]);
    const GradCoefficients<T> k = finish_backward<T>(ch, sums[ch], sums[r.c + ch], static_cast<double>(r.rows), weight,
                                                     save_invstd, grad_weight, grad_bias);
    t_hi[ch] = centered.hi, t_lo[ch] = centered.lo, a[ch] = k.a, b[ch] = k.b, c[ch] = k.c;
  }
  for_each_chunk(r, [&](int64_t begin, int64_t end) TS_INLINE_INTO_CLONE {
    for (int64_t row = begin; row < end; ++row) {
      const T* v = px + row * r.c;
      const T* g = pg + row * r.c;
      T* out = pgx + row * r.c;
      for (int64_t ch = 0; ch < r.c; ++ch) out[ch] = a[ch] * g[ch] + b[ch] * ((v[ch] - t_hi[ch]) - t_lo[ch]) + c[ch];
    }
  });
}

bool channels_last(const Tensor& x) { return x.suggest_memory_format() == MemoryFormat::kChannelsLast; }

}  // namespace

Tensor CpuKernels::batch_norm_forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                               const Tensor& running_mean, const Tensor& running_var, double momentum,
                                               double eps, const Tensor& y, const Tensor& save_mean,
                                               const Tensor& save_invstd) const {
  const Tensor means = allocate_means(x.size(1));
  dispatch_f32_f64("batch_norm", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (channels_last(x)) {
      forward_training_channels_last<T>(x, weight, bias, running_mean, running_var, momentum, eps, y, save_mean,
                                        save_invstd, means);
    } else {
      forward_training<T>(x, weight, bias, running_mean, running_var, momentum, eps, y, save_mean, save_invstd, means);
    }
  });
  return means;
}

void CpuKernels::batch_norm_backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                              const Tensor& /*save_mean*/, const Tensor& save_invstd,
                                              const Tensor& reserve, double /*eps*/, const Tensor& grad_x,
                                              const Tensor& grad_weight, const Tensor& grad_bias) const {
  TS_CHECK(reserve.defined() && reserve.dtype() == DType::kF64 && reserve.numel() == 2 * x.size(1),
           "batch_norm backward: the reserve must be the forward's [2, ", x.size(1), "] f64 means, got ",
           reserve.describe());
  dispatch_f32_f64("batch_norm backward", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (channels_last(x)) {
      backward_training_channels_last<T>(x, grad_y, weight, save_invstd, reserve, grad_x, grad_weight, grad_bias);
    } else {
      backward_training<T>(x, grad_y, weight, save_invstd, reserve, grad_x, grad_weight, grad_bias);
    }
  });
}

}  // namespace ts::nn::functional
