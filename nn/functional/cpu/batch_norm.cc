// CPU batch normalization in training mode, threaded over channels. Sums
// accumulate in double and the variance is two-pass (no cancellation), so f32
// results are as exact as f32 can hold.
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

template <typename T>
void forward_training(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                      const Tensor& running_var, double momentum, double eps, const Tensor& y,
                      const Tensor& save_mean, const Tensor& save_invstd) {
  const ChannelLayout l = layout_of(x);
  const double count = static_cast<double>(l.n * l.plane);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  cpu::parallel_for(l.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      double sum = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        for (int64_t j = 0; j < l.plane; ++j) sum += v[j];
      }
      const double mean = sum / count;
      double sq = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        for (int64_t j = 0; j < l.plane; ++j) sq += (v[j] - mean) * (v[j] - mean);
      }
      const double var = sq / count;
      const double invstd = 1.0 / std::sqrt(var + eps);
      save_mean.data<T>()[ch] = static_cast<T>(mean);
      save_invstd.data<T>()[ch] = static_cast<T>(invstd);
      T* rm = running_mean.data<T>() + ch;
      T* rv = running_var.data<T>() + ch;
      *rm = static_cast<T>((1 - momentum) * *rm + momentum * mean);
      *rv = static_cast<T>((1 - momentum) * *rv + momentum * var * count / (count - 1));
      const double scale = (weight.defined() ? weight.data<T>()[ch] : 1.0) * invstd;
      const double shift = (bias.defined() ? bias.data<T>()[ch] : 0.0) - mean * scale;
      const T s = static_cast<T>(scale), b = static_cast<T>(shift);
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        T* out = py + l.offset(i, ch);
        for (int64_t j = 0; j < l.plane; ++j) out[j] = v[j] * s + b;
      }
    }
  });
}

// dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)), with
// xhat = (x - mean) * invstd; dw = sum(dy * xhat); db = sum(dy).
template <typename T>
void backward_training(const Tensor& x, const Tensor& grad_y, const Tensor& weight, const Tensor& save_mean,
                       const Tensor& save_invstd, const Tensor& grad_x, const Tensor& grad_weight,
                       const Tensor& grad_bias) {
  const ChannelLayout l = layout_of(x);
  const double count = static_cast<double>(l.n * l.plane);
  const T* px = x.data<T>();
  const T* pg = grad_y.data<T>();
  T* pgx = grad_x.data<T>();
  cpu::parallel_for(l.c, 1, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      const double mean = save_mean.data<T>()[ch], invstd = save_invstd.data<T>()[ch];
      double sum_dy = 0, sum_dy_xmu = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        const T* g = pg + l.offset(i, ch);
        for (int64_t j = 0; j < l.plane; ++j) {
          sum_dy += g[j];
          sum_dy_xmu += g[j] * (v[j] - mean);
        }
      }
      grad_weight.data<T>()[ch] = static_cast<T>(sum_dy_xmu * invstd);
      grad_bias.data<T>()[ch] = static_cast<T>(sum_dy);
      const double w = weight.defined() ? weight.data<T>()[ch] : 1.0;
      // dx = a * dy + b * x + c, per channel.
      const double k = invstd * invstd * sum_dy_xmu / count;
      const double a = w * invstd;
      const double b = -a * k;
      const double c = a * (mean * k - sum_dy / count);
      const T ta = static_cast<T>(a), tb = static_cast<T>(b), tc = static_cast<T>(c);
      for (int64_t i = 0; i < l.n; ++i) {
        const T* v = px + l.offset(i, ch);
        const T* g = pg + l.offset(i, ch);
        T* out = pgx + l.offset(i, ch);
        for (int64_t j = 0; j < l.plane; ++j) out[j] = ta * g[j] + tb * v[j] + tc;
      }
    }
  });
}

}  // namespace

absl::Status CpuKernels::batch_norm_forward_training(const Tensor& x, const Tensor& weight,
                                                     const Tensor& bias, const Tensor& running_mean,
                                                     const Tensor& running_var, double momentum, double eps,
                                                     const Tensor& y, const Tensor& save_mean,
                                                     const Tensor& save_invstd) const {
  return dispatch_f32_f64("batch_norm", x.dtype(), [&](auto tag) {
    forward_training<decltype(tag)>(x, weight, bias, running_mean, running_var, momentum, eps, y,
                                    save_mean, save_invstd);
  });
}

absl::Status CpuKernels::batch_norm_backward_training(const Tensor& x, const Tensor& grad_y,
                                                      const Tensor& weight, const Tensor& save_mean,
                                                      const Tensor& save_invstd, double /*eps*/,
                                                      const Tensor& grad_x, const Tensor& grad_weight,
                                                      const Tensor& grad_bias) const {
  return dispatch_f32_f64("batch_norm backward", x.dtype(), [&](auto tag) {
    backward_training<decltype(tag)>(x, grad_y, weight, save_mean, save_invstd, grad_x, grad_weight,
                                     grad_bias);
  });
}

}  // namespace ts::nn::functional
