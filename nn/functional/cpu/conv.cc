// CPU convolution. f32 runs on oneDNN (onednn_conv.cc) unless the
// reference path is asked for (cpu_reference_path.h); f64, and f32 on the
// reference path, run the readable kernels below.
//
// The reference: im2col over a chunk of images into one column matrix, one
// OpenBLAS GEMM per group over the whole chunk, and a threaded copy into NCHW.
// A 2-D convolution is a 3-D one of depth 1 here.
// Batching the images makes the GEMMs wide enough for OpenBLAS to thread
// well; im2col/col2im and the copies run on our pool between the GEMMs, so
// the two thread sets never compete. 1x1 stride-1 unpadded convolutions are
// plain GEMMs on the input itself. The reference reads row-major tensors: a
// channels-last call runs it on row-major copies and copies the results
// back (the reference is for checking, not for speed).
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "nn/functional/cpu/cpu_kernels.h"
#include "nn/functional/cpu/onednn_conv.h"
#include "nn/functional/cpu_reference_path.h"
#include "tensor/cpu/parallel.h"
#include "tensor/ops.h"

namespace ts::nn::functional {
namespace {

// Column-matrix elements per chunk (2 MiB of f32): GEMMs thousands of
// columns wide, while im2col's output is still in cache when the GEMM reads
// it, and the scratch stays small.
constexpr int64_t kColumnBudget = int64_t{1} << 19;

// Row-major C = alpha * op(A) op(B) + beta * C.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b,
              ldb, beta, c, ldc);
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b, int64_t ldb,
          double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, lda, b,
              ldb, beta, c, ldc);
}

// Per-thread scratch that only grows: steady-state training reuses the same
// pages instead of faulting in fresh ones on every call.
template <typename T>
T* scratch(int slot, int64_t elements) {
  thread_local std::vector<T> buffers[2];
  std::vector<T>& buffer = buffers[slot];
  if (static_cast<int64_t>(buffer.size()) < elements) buffer.resize(elements);
  return buffer.data();
}

// Output columns [lo, hi) whose input column ow * stride + offset lies in
// [0, width).
struct ValidRange {
  int64_t lo, hi;
};
ValidRange valid_columns(int64_t offset, int64_t stride, int64_t width, int64_t out_w) {
  const int64_t lo = offset < 0 ? (-offset + stride - 1) / stride : 0;
  const int64_t hi = width - offset <= 0 ? 0 : std::min(out_w, (width - offset + stride - 1) / stride);
  return {std::min(lo, out_w), std::max(hi, std::min(lo, out_w))};
}

template <typename T>
class ConvCpu {
 public:
  explicit ConvCpu(const ConvGeometry& g)
      : g_(g),
        plane_(g.d * g.h * g.w),
        p_(g.out_d * g.out_h * g.out_w),
        k_all_(g.c_in * g.kd * g.kh * g.kw),
        k_(k_all_ / g.groups),
        cog_(g.c_out / g.groups),
        pointwise_(g.kd == 1 && g.kh == 1 && g.kw == 1 && g.stride_d == 1 && g.stride_h == 1 && g.stride_w == 1 &&
                   g.pad_d == 0 && g.pad_h == 0 && g.pad_w == 0),
        chunk_(std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(k_all_ * p_, 1), 1, g.n)) {}

  void forward(const T* x, const T* w, const T* bias, T* out) const {
    if (pointwise_) {
      for (int64_t n = 0; n < g_.n; ++n) {
        for (int64_t grp = 0; grp < g_.groups; ++grp) {
          gemm(false, false, cog_, p_, k_, w + grp * cog_ * k_, k_, x + (n * g_.c_in + grp * k_) * p_, p_, T(0),
               out + (n * g_.c_out + grp * cog_) * p_, p_);
        }
      }
      if (bias != nullptr) {
        cpu::parallel_for(g_.n * g_.c_out, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const T b = bias[i % g_.c_out];
            T* row = out + i * p_;
            for (int64_t j = 0; j < p_; ++j) row[j] += b;
          }
        });
      }
      return;
    }
    T* col = scratch<T>(0, k_all_ * chunk_ * p_);
    T* tmp = scratch<T>(1, g_.c_out * chunk_ * p_);
    for (int64_t n0 = 0; n0 < g_.n; n0 += chunk_) {
      const int64_t nb = std::min(chunk_, g_.n - n0), cols = nb * p_;
      im2col(x + n0 * g_.c_in * plane_, nb, col);
      for (int64_t grp = 0; grp < g_.groups; ++grp) {
        gemm(false, false, cog_, cols, k_, w + grp * cog_ * k_, k_, col + grp * k_ * cols, cols, T(0),
             tmp + grp * cog_ * cols, cols);
      }
      // tmp [c_out, nb * p] -> out [nb, c_out, p], adding the bias.
      cpu::parallel_for(nb * g_.c_out, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t b = i / g_.c_out, o = i % g_.c_out;
          const T* src = tmp + o * cols + b * p_;
          T* dst = out + ((n0 + b) * g_.c_out + o) * p_;
          const T add = bias != nullptr ? bias[o] : T(0);
          for (int64_t j = 0; j < p_; ++j) dst[j] = src[j] + add;
        }
      });
    }
  }

  // grad_x / grad_w may be null (not wanted).
  void backward(const T* x, const T* w, const T* gy, T* gx, T* gw) const {
    if (pointwise_) {
      for (int64_t n = 0; n < g_.n; ++n) {
        for (int64_t grp = 0; grp < g_.groups; ++grp) {
          const T* gyn = gy + (n * g_.c_out + grp * cog_) * p_;
          if (gx != nullptr) {
            gemm(true, false, k_, p_, cog_, w + grp * cog_ * k_, k_, gyn, p_, T(0), gx + (n * g_.c_in + grp * k_) * p_,
                 p_);
          }
          if (gw != nullptr) {
            gemm(false, true, cog_, k_, p_, gyn, p_, x + (n * g_.c_in + grp * k_) * p_, p_, n == 0 ? T(0) : T(1),
                 gw + grp * cog_ * k_, k_);
          }
        }
      }
      return;
    }
    T* col = scratch<T>(0, k_all_ * chunk_ * p_);
    T* gyt = scratch<T>(1, g_.c_out * chunk_ * p_);
    for (int64_t n0 = 0; n0 < g_.n; n0 += chunk_) {
      const int64_t nb = std::min(chunk_, g_.n - n0), cols = nb * p_;
      // gy [nb, c_out, p] -> gyt [c_out, nb * p], the layout of the GEMMs.
      cpu::parallel_for(nb * g_.c_out, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t b = i / g_.c_out, o = i % g_.c_out;
          std::memcpy(gyt + o * cols + b * p_, gy + ((n0 + b) * g_.c_out + o) * p_, p_ * sizeof(T));
        }
      });
      if (gw != nullptr) {
        im2col(x + n0 * g_.c_in * plane_, nb, col);
        for (int64_t grp = 0; grp < g_.groups; ++grp) {
          gemm(false, true, cog_, k_, cols, gyt + grp * cog_ * cols, cols, col + grp * k_ * cols, cols,
               n0 == 0 ? T(0) : T(1), gw + grp * cog_ * k_, k_);
        }
      }
      if (gx != nullptr) {
        for (int64_t grp = 0; grp < g_.groups; ++grp) {
          gemm(true, false, k_, cols, cog_, w + grp * cog_ * k_, k_, gyt + grp * cog_ * cols, cols, T(0),
               col + grp * k_ * cols, cols);
        }
        col2im(col, nb, gx + n0 * g_.c_in * plane_);
      }
    }
  }

 private:
  // The input row that output row (od, oh) reads under kernel taps (kz, ki),
  // or -1 where that row is padding.
  int64_t input_row(int64_t od, int64_t oh, int64_t kz, int64_t ki) const {
    const int64_t iz = od * g_.stride_d - g_.pad_d + kz * g_.dil_d;
    const int64_t ih = oh * g_.stride_h - g_.pad_h + ki * g_.dil_h;
    if (iz < 0 || iz >= g_.d || ih < 0 || ih >= g_.h) return -1;
    return iz * g_.h + ih;
  }

  // x [nb, c_in, d, h, w] -> col [c_in * kd * kh * kw, nb * p]: row
  // (c, kz, ki, kj) holds, for each image and output position, the input
  // under kernel tap (kz, ki, kj).
  void im2col(const T* x, int64_t nb, T* col) const {
    const int64_t cols = nb * p_, taps = g_.kd * g_.kh * g_.kw;
    cpu::parallel_for(nb * k_all_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t b = u / k_all_, r = u % k_all_;
        const int64_t c = r / taps, kz = r % taps / (g_.kh * g_.kw), ki = r % (g_.kh * g_.kw) / g_.kw, kj = r % g_.kw;
        const T* src = x + (b * g_.c_in + c) * plane_;
        T* dst = col + r * cols + b * p_;
        const int64_t col_offset = kj * g_.dil_w - g_.pad_w;
        const ValidRange v = valid_columns(col_offset, g_.stride_w, g_.w, g_.out_w);
        for (int64_t od = 0; od < g_.out_d; ++od) {
          for (int64_t oh = 0; oh < g_.out_h; ++oh, dst += g_.out_w) {
            const int64_t in_row = input_row(od, oh, kz, ki);
            if (in_row < 0) {
              std::fill(dst, dst + g_.out_w, T(0));
              continue;
            }
            const T* row = src + in_row * g_.w + col_offset;
            std::fill(dst, dst + v.lo, T(0));
            if (g_.stride_w == 1) {
              std::memcpy(dst + v.lo, row + v.lo, (v.hi - v.lo) * sizeof(T));
            } else {
              for (int64_t ow = v.lo; ow < v.hi; ++ow) dst[ow] = row[ow * g_.stride_w];
            }
            std::fill(dst + v.hi, dst + g_.out_w, T(0));
          }
        }
      }
    });
  }

  // The adjoint of im2col: each (image, channel) volume of gx is owned by one
  // task, which sums the column entries of all its kernel taps into it.
  void col2im(const T* col, int64_t nb, T* gx) const {
    const int64_t cols = nb * p_;
    cpu::parallel_for(nb * g_.c_in, 1, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t b = u / g_.c_in, c = u % g_.c_in;
        T* dst = gx + (b * g_.c_in + c) * plane_;
        std::fill(dst, dst + plane_, T(0));
        for (int64_t kz = 0; kz < g_.kd; ++kz) {
          for (int64_t ki = 0; ki < g_.kh; ++ki) {
            for (int64_t kj = 0; kj < g_.kw; ++kj) {
              const T* src = col + (((c * g_.kd + kz) * g_.kh + ki) * g_.kw + kj) * cols + b * p_;
              const int64_t col_offset = kj * g_.dil_w - g_.pad_w;
              const ValidRange v = valid_columns(col_offset, g_.stride_w, g_.w, g_.out_w);
              for (int64_t od = 0; od < g_.out_d; ++od) {
                for (int64_t oh = 0; oh < g_.out_h; ++oh) {
                  const int64_t in_row = input_row(od, oh, kz, ki);
                  if (in_row < 0) continue;
                  T* row = dst + in_row * g_.w + col_offset;
                  const T* s = src + (od * g_.out_h + oh) * g_.out_w;
                  if (g_.stride_w == 1) {
                    for (int64_t ow = v.lo; ow < v.hi; ++ow) row[ow] += s[ow];
                  } else {
                    for (int64_t ow = v.lo; ow < v.hi; ++ow) row[ow * g_.stride_w] += s[ow];
                  }
                }
              }
            }
          }
        }
      }
    });
  }

  ConvGeometry g_;
  int64_t plane_, p_, k_all_, k_, cog_;
  bool pointwise_;
  int64_t chunk_;  // images per im2col chunk
};

bool use_onednn(DType dtype) { return dtype == DType::kF32 && !cpu_reference_path(); }

}  // namespace

ConvLayouts CpuKernels::conv_layouts(MemoryFormat input, DType dtype) const {
  // oneDNN reads either activation layout, and reorders the weight into its
  // own blocked layout from whichever it is given: the parameter's own.
  if (use_onednn(dtype)) return {input, MemoryFormat::kContiguous};
  return {};
}

void CpuKernels::conv_forward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& bias,
                              const Tensor& out) const {
  if (use_onednn(x.dtype())) return onednn_conv_forward(g, x, weight, bias, out);
  TS_CHECK(!g.channels_last && !g.weight_channels_last, "conv: the reference loops are row-major only");
  dispatch_f32_f64(g.spatial_dims == 2 ? "conv2d" : "conv3d", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ConvCpu<T>(g).forward(x.data<T>(), weight.data<T>(), bias.defined() ? bias.data<T>() : nullptr, out.data<T>());
  });
}

void CpuKernels::conv_backward(const ConvGeometry& g, const Tensor& x, const Tensor& weight, const Tensor& grad_out,
                               const Tensor& grad_x, const Tensor& grad_weight) const {
  if (use_onednn(x.dtype())) return onednn_conv_backward(g, x, weight, grad_out, grad_x, grad_weight);
  TS_CHECK(!g.channels_last && !g.weight_channels_last, "conv backward: the reference loops are row-major only");
  dispatch_f32_f64(g.spatial_dims == 2 ? "conv2d backward" : "conv3d backward", x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ConvCpu<T>(g).backward(x.data<T>(), weight.data<T>(), grad_out.data<T>(),
                           grad_x.defined() ? grad_x.data<T>() : nullptr,
                           grad_weight.defined() ? grad_weight.data<T>() : nullptr);
  });
}

}  // namespace ts::nn::functional
