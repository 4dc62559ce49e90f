// CPU batch normalization in training mode, threaded over channels. Sums
// accumulate in double and the variance is two-pass (no cancellation), so f32
// results are as exact as f32 can hold, also for activations far from zero
// relative to their spread: x - mean is formed against the mean split into
// two T values (CenteredBy), never as x * scale + shift, whose two terms
// would cancel. Row-major x is walked a channel at a time (its values are n
// contiguous runs); channels-last x a block of neighbouring channels at a
// time, down all its rows, so every read uses whole cache lines. Either way
// each channel sums in one fixed order, whatever the thread count.
#include <algorithm>
#include <cmath>

#include "nn/functional/cpu/cpu_kernels.h"
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

// The sum of term(j) for j in [0, n), in double over kLanes partial sums: one
// running sum is a chain of dependent adds (one per add latency, and not
// vectorizable, since reassociating it is not allowed); independent lanes
// are both.
template <typename Term>
double lane_sum(int64_t n, Term term) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) lanes[k] += term(j + k);
  }
  double sum = 0;
  for (; j < n; ++j) sum += term(j);
  for (double lane : lanes) sum += lane;
  return sum;
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
Mean channel_mean(const T* px, const ChannelLayout& l, int64_t ch) {
  const double shift = px[l.offset(0, ch)];
  double sum = 0;
  for (int64_t i = 0; i < l.n; ++i) {
    const T* v = px + l.offset(i, ch);
    sum += lane_sum(l.plane, [&](int64_t j) { return static_cast<double>(v[j]) - shift; });
  }
  return shifted_mean(shift, sum, static_cast<double>(l.n * l.plane));
}

// v - mean in U to within U's rounding of the difference: the mean is
// rounded to hi + lo in U; v - hi is exact for v near the mean (Sterbenz),
// then lo is taken off.
template <typename U>
struct CenteredBy {
  CenteredBy() = default;
  explicit CenteredBy(const Mean& mean)
      : hi(static_cast<U>(mean.hi)), lo(static_cast<U>((mean.hi - static_cast<double>(hi)) + mean.lo)) {}
  U operator()(U v) const { return (v - hi) - lo; }
  U hi = 0, lo = 0;
};

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
                      const Tensor& save_invstd) {
  const ChannelLayout l = layout_of(x);
  const double count = static_cast<double>(l.n * l.plane);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  cpu::parallel_for(l.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      const Mean mean = channel_mean(px, l, ch);
      const CenteredBy<double> centered_f64(mean);
      double sq = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        sq += lane_sum(l.plane, [&](int64_t j) {
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
// taken again from x (the saved one was rounded to T, which for |mean| >> std
// shifts every xhat of the channel), and sum(dy * (x - mean)) is summed over
// the centered values in a pass of its own: the one-pass form
// sum(dy * x) - mean * sum(dy) cancels when |mean| >> std (at 1e8 it lost
// all but 7 digits of dw in f64).
template <typename T>
void backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight, const Tensor& save_invstd,
                       const Tensor& grad_x, const Tensor& grad_weight, const Tensor& grad_bias) {
  const ChannelLayout l = layout_of(x);
  const double count = static_cast<double>(l.n * l.plane);
  const T* px = x.data<T>();
  const T* pg = grad_y.data<T>();
  T* pgx = grad_x.data<T>();
  cpu::parallel_for(l.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      const Mean mean = channel_mean(px, l, ch);
      const CenteredBy<double> centered_f64(mean);
      double sum_dy = 0, sum_dy_xmu = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        const T* g = pg + l.offset(i, ch);
        sum_dy += lane_sum(l.plane, [&](int64_t j) { return static_cast<double>(g[j]); });
        sum_dy_xmu += lane_sum(l.plane, [&](int64_t j) { return static_cast<double>(g[j]) * centered_f64(v[j]); });
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

// Channels-last x viewed as [rows, c] (rows = n * d * h * w): blocks of
// kChannelBlock neighbouring channels, each walked down every row, with one
// running double sum per channel (the channels of a block are the
// independent lanes that lane_sum makes for the row-major walk).
constexpr int64_t kChannelBlock = 16;

struct ChannelBlocks {
  int64_t rows, c;
  int64_t count() const { return (c + kChannelBlock - 1) / kChannelBlock; }
  int64_t width(int64_t block) const { return std::min(kChannelBlock, c - block * kChannelBlock); }
};

ChannelBlocks blocks_of(const Tensor& x) { return {x.numel() / x.size(1), x.size(1)}; }

// Calls fn(block, c0, width) for every block, threaded over blocks.
template <typename Fn>
void for_each_block(const ChannelBlocks& b, Fn fn) {
  cpu::parallel_for(b.count(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) fn(block * kChannelBlock, b.width(block));
  });
}

// The means of channels [c0, c0 + width), as channel_mean takes them.
template <typename T>
void block_means(const T* px, const ChannelBlocks& b, int64_t c0, int64_t width, Mean* means) {
  double shift[kChannelBlock], sum[kChannelBlock] = {};
  for (int64_t k = 0; k < width; ++k) shift[k] = px[c0 + k];
  for (int64_t r = 0; r < b.rows; ++r) {
    const T* v = px + r * b.c + c0;
    for (int64_t k = 0; k < width; ++k) sum[k] += static_cast<double>(v[k]) - shift[k];
  }
  for (int64_t k = 0; k < width; ++k) means[k] = shifted_mean(shift[k], sum[k], static_cast<double>(b.rows));
}

template <typename T>
void forward_training_channels_last(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                    const Tensor& running_mean, const Tensor& running_var, double momentum, double eps,
                                    const Tensor& y, const Tensor& save_mean, const Tensor& save_invstd) {
  const ChannelBlocks b = blocks_of(x);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for_each_block(b, [&](int64_t c0, int64_t width) {
    Mean means[kChannelBlock];
    block_means(px, b, c0, width, means);
    CenteredBy<double> centered_f64[kChannelBlock];
    for (int64_t k = 0; k < width; ++k) centered_f64[k] = CenteredBy<double>(means[k]);
    double sq[kChannelBlock] = {};
    for (int64_t r = 0; r < b.rows; ++r) {
      const T* v = px + r * b.c + c0;
      for (int64_t k = 0; k < width; ++k) {
        const double d = centered_f64[k](v[k]);
        sq[k] += d * d;
      }
    }
    CenteredBy<T> centered[kChannelBlock];
    Affine<T> affine[kChannelBlock];
    for (int64_t k = 0; k < width; ++k) {
      centered[k] = CenteredBy<T>(means[k]);
      affine[k] = finish_forward<T>(c0 + k, means[k], sq[k], static_cast<double>(b.rows), weight, bias, running_mean,
                                    running_var, momentum, eps, save_mean, save_invstd);
    }
    for (int64_t r = 0; r < b.rows; ++r) {
      const T* v = px + r * b.c + c0;
      T* out = py + r * b.c + c0;
      for (int64_t k = 0; k < width; ++k) out[k] = centered[k](v[k]) * affine[k].scale + affine[k].shift;
    }
  });
}

template <typename T>
void backward_training_channels_last(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                     const Tensor& save_invstd, const Tensor& grad_x, const Tensor& grad_weight,
                                     const Tensor& grad_bias) {
  const ChannelBlocks b = blocks_of(x);
  const T* px = x.data<T>();
  const T* pg = grad_y.data<T>();
  T* pgx = grad_x.data<T>();
  for_each_block(b, [&](int64_t c0, int64_t width) {
    Mean means[kChannelBlock];
    block_means(px, b, c0, width, means);
    CenteredBy<double> centered_f64[kChannelBlock];
    for (int64_t k = 0; k < width; ++k) centered_f64[k] = CenteredBy<double>(means[k]);
    double sum_dy[kChannelBlock] = {}, sum_dy_xmu[kChannelBlock] = {};
    for (int64_t r = 0; r < b.rows; ++r) {
      const T* v = px + r * b.c + c0;
      const T* g = pg + r * b.c + c0;
      for (int64_t k = 0; k < width; ++k) {
        sum_dy[k] += static_cast<double>(g[k]);
        sum_dy_xmu[k] += static_cast<double>(g[k]) * centered_f64[k](v[k]);
      }
    }
    CenteredBy<T> centered[kChannelBlock];
    GradCoefficients<T> coefficients[kChannelBlock];
    for (int64_t k = 0; k < width; ++k) {
      centered[k] = CenteredBy<T>(means[k]);
      coefficients[k] = finish_backward<T>(c0 + k, sum_dy[k], sum_dy_xmu[k], static_cast<double>(b.rows), weight,
                                           save_invstd, grad_weight, grad_bias);
    }
    for (int64_t r = 0; r < b.rows; ++r) {
      const T* v = px + r * b.c + c0;
      const T* g = pg + r * b.c + c0;
      T* out = pgx + r * b.c + c0;
      for (int64_t k = 0; k < width; ++k) {
        out[k] = coefficients[k].a * g[k] + coefficients[k].b * centered[k](v[k]) + coefficients[k].c;
      }
    }
  });
}

bool channels_last(const Tensor& x) { return x.suggest_memory_format() == MemoryFormat::kChannelsLast; }

}  // namespace

void CpuKernels::batch_norm_forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                             const Tensor& running_mean, const Tensor& running_var, double momentum,
                                             double eps, const Tensor& y, const Tensor& save_mean,
                                             const Tensor& save_invstd) const {
  dispatch_f32_f64("batch_norm", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (channels_last(x)) {
      forward_training_channels_last<T>(x, weight, bias, running_mean, running_var, momentum, eps, y, save_mean,
                                        save_invstd);
    } else {
      forward_training<T>(x, weight, bias, running_mean, running_var, momentum, eps, y, save_mean, save_invstd);
    }
  });
}

void CpuKernels::batch_norm_backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight,
                                              const Tensor& /*save_mean*/, const Tensor& save_invstd, double /*eps*/,
                                              const Tensor& grad_x, const Tensor& grad_weight,
                                              const Tensor& grad_bias) const {
  dispatch_f32_f64("batch_norm backward", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (channels_last(x)) {
      backward_training_channels_last<T>(x, grad_y, weight, save_invstd, grad_x, grad_weight, grad_bias);
    } else {
      backward_training<T>(x, grad_y, weight, save_invstd, grad_x, grad_weight, grad_bias);
    }
  });
}

}  // namespace ts::nn::functional
