#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/transforms/gpu_batch_ops.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/device.h"
#include "tensor/cuda/stream.h"
#include "tensor/ops.h"

namespace ts::data::transforms {
namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 ? blocks : 65535);  // grid-stride loops cover the rest
}

absl::Status check_batch(const Tensor& batch, int64_t min_dims, const char* op, const char* layout) {
  if (!batch.defined() || !batch.device().is_cuda() || batch.dim() < min_dims) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": expected a CUDA batch ", layout, ", got ",
                                                   batch.defined() ? batch.describe() : "undefined"));
  }
  return absl::OkStatus();
}

absl::Status check_params_count(size_t count, const Tensor& batch, const char* op) {
  if (static_cast<int64_t>(count) != batch.size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", count, " parameter sets for ", batch.describe()));
  }
  return absl::OkStatus();
}

// Elements move as unsigned words of their size, whatever the dtype.
template <typename F>
absl::Status visit_word(int64_t itemsize, F&& f) {
  switch (itemsize) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
  }
  return absl::InternalError(absl::StrCat("unsupported element size ", itemsize));
}

// ---- Normalize: out = x * a[c] + b[c], rounded as the CPU loop rounds
// (multiply, then add; never fused), so both paths agree bit for bit.
template <typename T>
__global__ void normalize_kernel(const T* in, float* out, const float* coeffs, int64_t n, int64_t channels,
                                 int64_t plane) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = (i / plane) % channels;
    out[i] = __fadd_rn(__fmul_rn(static_cast<float>(in[i]), coeffs[2 * c]), coeffs[2 * c + 1]);
  }
}

// ---- Crop with zero padding, then an optional mirror of the columns.
template <typename W>
__global__ void crop_flip_kernel(const W* in, W* out, const int64_t* params, int64_t n, int64_t channels, int64_t h,
                                 int64_t w, int64_t out_h, int64_t out_w, int64_t padding) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t x = i % out_w;
    const int64_t y = (i / out_w) % out_h;
    const int64_t plane = i / (out_w * out_h);  // n * channels + c
    const int64_t sample = plane / channels;
    const int64_t top = params[3 * sample], left = params[3 * sample + 1];
    const bool flip = params[3 * sample + 2] != 0;
    const int64_t sy = top + y - padding;
    const int64_t sx = left + (flip ? out_w - 1 - x : x) - padding;
    out[i] = (sy >= 0 && sy < h && sx >= 0 && sx < w) ? in[(plane * h + sy) * w + sx] : W{0};
  }
}

// ---- Reflections along D, H, W, then rot90 quarter turns in (H, W);
// volume.cc derives the index formulas.
template <typename W>
__global__ void flip_rotate_kernel(const W* in, W* out, const int64_t* params, int64_t n, int64_t per_sample, int64_t d,
                                   int64_t h, int64_t w) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t sample = i / per_sample;
    const int64_t x = i % w;
    const int64_t y = (i / w) % h;
    const int64_t z = (i / (w * h)) % d;
    const int64_t lead = i / (w * h * d);  // sample and channel
    const int64_t* p = params + 4 * sample;
    const int64_t k = p[3];
    int64_t sy = y, sx = x;  // coordinates in the flipped volume
    if (k == 1) {
      sy = x;
      sx = w - 1 - y;
    }
    if (k == 2) {
      sy = h - 1 - y;
      sx = w - 1 - x;
    }
    if (k == 3) {
      sy = h - 1 - x;
      sx = y;
    }
    const int64_t sz = p[0] ? d - 1 - z : z;
    if (p[1]) sy = h - 1 - sy;
    if (p[2]) sx = w - 1 - sx;
    out[i] = in[((lead * d + sz) * h + sy) * w + sx];
  }
}

// A failed launch (bad configuration, no kernel image for the device) as a
// status naming the op.
absl::Status launched(const char* op) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return absl::OkStatus();
  return cuda::call_error(cuda::status_code_of(e), cuda::describe_error(e), op, __FILE__, __LINE__);
}

}  // namespace

absl::StatusOr<Tensor> normalize_batch(const Tensor& batch, absl::Span<const float> mean, absl::Span<const float> std) {
  RETURN_IF_ERROR(check_batch(batch, 2, "normalize_batch", "[N, C, ...]"));
  const int64_t channels = batch.size(1);
  if (batch.dtype() != DType::kU8 && batch.dtype() != DType::kF32) {
    return absl::InvalidArgumentError(absl::StrCat("normalize_batch: expected u8 or f32, got ", batch.describe()));
  }
  ASSIGN_OR_RETURN(std::vector<float> coeffs, normalize_coefficients(batch.dtype(), channels, mean, std));
  const int device = batch.device().index;
  cuda::DeviceGuard guard(device);
  const Tensor in = contiguous(batch);
  const Tensor coeffs_dev = from_vector<float>(coeffs, {static_cast<int64_t>(coeffs.size())}, batch.device());
  Tensor out = empty(batch.shape(), {DType::kF32, batch.device()});
  const int64_t n = batch.numel();
  if (n == 0) return out;
  const int64_t plane = n / (batch.size(0) * channels);
  const cudaStream_t stream = cuda::current_stream(device);
  if (batch.dtype() == DType::kU8) {
    normalize_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in.data<uint8_t>(), out.data<float>(),
                                                             coeffs_dev.data<float>(), n, channels, plane);
  } else {
    normalize_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in.data<float>(), out.data<float>(),
                                                             coeffs_dev.data<float>(), n, channels, plane);
  }
  RETURN_IF_ERROR(launched("normalize_batch"));
  return out;
}

absl::StatusOr<Tensor> crop_flip_batch(const Tensor& batch, int64_t out_h, int64_t out_w, int64_t padding,
                                       absl::Span<const CropFlip> params) {
  RETURN_IF_ERROR(check_batch(batch, 4, "crop_flip_batch", "[N, C, H, W]"));
  if (batch.dim() != 4) {
    return absl::InvalidArgumentError(absl::StrCat("crop_flip_batch: expected [N, C, H, W], got ", batch.describe()));
  }
  RETURN_IF_ERROR(check_params_count(params.size(), batch, "crop_flip_batch"));
  const int64_t h = batch.size(2), w = batch.size(3);
  if (padding < 0 || out_h < 1 || out_w < 1 || out_h > h + 2 * padding || out_w > w + 2 * padding) {
    return absl::InvalidArgumentError(absl::StrCat("crop_flip_batch: a ", out_h, "x", out_w, " crop with padding ",
                                                   padding, " does not fit ", batch.describe()));
  }
  std::vector<int64_t> packed;
  for (size_t i = 0; i < params.size(); ++i) {
    const CropFlip& p = params[i];
    if (p.top < 0 || p.left < 0 || p.top + out_h > h + 2 * padding || p.left + out_w > w + 2 * padding) {
      return absl::InvalidArgumentError(absl::StrCat("crop_flip_batch: sample ", i, ": offset (", p.top, ", ", p.left,
                                                     ") is outside the padded image"));
    }
    packed.insert(packed.end(), {p.top, p.left, p.flip ? 1 : 0});
  }
  const int device = batch.device().index;
  cuda::DeviceGuard guard(device);
  const Tensor in = contiguous(batch);
  const Tensor params_dev = from_vector<int64_t>(packed, {static_cast<int64_t>(packed.size())}, batch.device());
  const int64_t channels = batch.size(1);
  Tensor out = empty({batch.size(0), channels, out_h, out_w}, {batch.dtype(), batch.device()});
  const int64_t n = out.numel();
  if (n == 0) return out;
  const cudaStream_t stream = cuda::current_stream(device);
  RETURN_IF_ERROR(visit_word(batch.itemsize(), [&](auto word) -> absl::Status {
    using W = decltype(word);
    crop_flip_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        static_cast<const W*>(in.raw_data()), static_cast<W*>(out.raw_data()), params_dev.data<int64_t>(), n, channels,
        h, w, out_h, out_w, padding);
    return launched("crop_flip_batch");
  }));
  return out;
}

absl::StatusOr<Tensor> flip_rotate_volume_batch(const Tensor& batch, absl::Span<const FlipRot3d> params) {
  RETURN_IF_ERROR(check_batch(batch, 4, "flip_rotate_volume_batch", "[N, ..., D, H, W]"));
  RETURN_IF_ERROR(check_params_count(params.size(), batch, "flip_rotate_volume_batch"));
  const int64_t d = batch.size(-3), h = batch.size(-2), w = batch.size(-1);
  std::vector<int64_t> packed;
  for (size_t i = 0; i < params.size(); ++i) {
    const FlipRot3d& p = params[i];
    if (p.rot90 < 0 || p.rot90 > 3 || (p.rot90 % 2 == 1 && h != w)) {
      return absl::InvalidArgumentError(absl::StrCat("flip_rotate_volume_batch: sample ", i, ": rot90 ", p.rot90,
                                                     " is invalid for ", batch.describe()));
    }
    packed.insert(packed.end(), {p.flip_d ? 1 : 0, p.flip_h ? 1 : 0, p.flip_w ? 1 : 0, int64_t{p.rot90}});
  }
  const int device = batch.device().index;
  cuda::DeviceGuard guard(device);
  const Tensor in = contiguous(batch);
  const Tensor params_dev = from_vector<int64_t>(packed, {static_cast<int64_t>(packed.size())}, batch.device());
  Tensor out = empty(batch.shape(), {batch.dtype(), batch.device()});
  const int64_t n = out.numel();
  if (n == 0) return out;
  const int64_t per_sample = n / batch.size(0);
  const cudaStream_t stream = cuda::current_stream(device);
  RETURN_IF_ERROR(visit_word(batch.itemsize(), [&](auto word) -> absl::Status {
    using W = decltype(word);
    flip_rotate_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const W*>(in.raw_data()),
                                                               static_cast<W*>(out.raw_data()),
                                                               params_dev.data<int64_t>(), n, per_sample, d, h, w);
    return launched("flip_rotate_volume_batch");
  }));
  return out;
}

}  // namespace ts::data::transforms
