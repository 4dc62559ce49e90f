#include "data/transforms/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tensor/cpu/isa.h"

namespace ts::data::transforms {
namespace {

// Pillow's fixed point for 8-bit images: 32 bits less 8 for the pixel and 2
// of headroom for filters with negative lobes.
constexpr int kPrecisionBits = 32 - 8 - 2;

// The filter taps of one axis: output i reads `count[i]` inputs from
// `first[i]` (relative to the crop) with weights[i * ksize + t].
struct Taps {
  int64_t ksize = 0;
  std::vector<int64_t> first;
  std::vector<int64_t> count;
  std::vector<int32_t> weights;
};

double triangle(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's precompute_coeffs (bilinear filter, support 1) and
// normalize_coeffs_8bpc, expression for expression so that every double
// rounds as there, for the outputs [begin, begin + n) of an axis resized
// from in_size to out_size.
Taps bilinear_taps(int64_t in_size, int64_t out_size, int64_t begin, int64_t n) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = filterscale;
  Taps taps;
  taps.ksize = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  taps.first.resize(n);
  taps.count.resize(n);
  taps.weights.assign(n * taps.ksize, 0);
  std::vector<double> k(taps.ksize);
  for (int64_t i = 0; i < n; ++i) {
    const double center = (begin + i + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    const int64_t xmin = std::max<int64_t>(static_cast<int>(center - support + 0.5), 0);
    const int64_t xmax = std::min<int64_t>(static_cast<int>(center + support + 0.5), in_size) - xmin;
    double ww = 0.0;
    for (int64_t x = 0; x < xmax; ++x) {
      k[x] = triangle((static_cast<double>(x + xmin) - center + 0.5) * ss);
      ww += k[x];
    }
    for (int64_t x = 0; x < xmax; ++x) {
      const double w = ww != 0.0 ? k[x] / ww : k[x];
      taps.weights[i * taps.ksize + x] =
          static_cast<int32_t>(w < 0 ? -0.5 + w * (1 << kPrecisionBits) : 0.5 + w * (1 << kPrecisionBits));
    }
    taps.first[i] = xmin;
    taps.count[i] = xmax;
  }
  return taps;
}

inline uint8_t clip8(int32_t v) {
  if (v >= (1 << kPrecisionBits << 8)) return 255;
  if (v <= 0) return 0;
  return static_cast<uint8_t>(v >> kPrecisionBits);
}

// The horizontal pass over one source row into C planes (plane c of the
// output row at out + c * plane_stride). The decoder's interleaved RGB
// (channel stride 1) has a loop of its own; other layouts read the channel
// count and stride at run time.
void resample_row_rgb(const uint8_t* __restrict row, int64_t pixel_stride, const Taps& taps, uint8_t* __restrict out,
                      int64_t plane_stride) {
  const int64_t n = static_cast<int64_t>(taps.first.size());
  for (int64_t i = 0; i < n; ++i) {
    const int32_t* w = taps.weights.data() + i * taps.ksize;
    const uint8_t* p = row + taps.first[i] * pixel_stride;
    int32_t r = 1 << (kPrecisionBits - 1), g = r, b = r;
    for (int64_t t = 0; t < taps.count[i]; ++t, p += pixel_stride) {
      r += p[0] * w[t];
      g += p[1] * w[t];
      b += p[2] * w[t];
    }
    out[i] = clip8(r);
    out[plane_stride + i] = clip8(g);
    out[2 * plane_stride + i] = clip8(b);
  }
}

void resample_row_strided(const uint8_t* row, int64_t pixel_stride, int64_t channel_stride, int64_t channels,
                          const Taps& taps, uint8_t* out, int64_t plane_stride) {
  const int64_t n = static_cast<int64_t>(taps.first.size());
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < n; ++i) {
      const int32_t* w = taps.weights.data() + i * taps.ksize;
      const uint8_t* p = row + taps.first[i] * pixel_stride + c * channel_stride;
      int32_t acc = 1 << (kPrecisionBits - 1);
      for (int64_t t = 0; t < taps.count[i]; ++t, p += pixel_stride) acc += *p * w[t];
      out[c * plane_stride + i] = clip8(acc);
    }
  }
}

// acc[m] += in[m] * weight: the vertical pass's inner loop, on restrict
// pointers so that it vectorizes (an 8-bit pointer may alias anything), and
// compiled for AVX2 too, taken where the CPU has it (tensor/cpu/isa.h).
void accumulate_row(const uint8_t* in, int32_t weight, int64_t n, int32_t* acc) {
  cpu::run_widest(
      [](const uint8_t* __restrict in, int32_t weight, int64_t n, int32_t* __restrict acc) TS_INLINE_INTO_CLONE {
        for (int64_t m = 0; m < n; ++m) acc[m] += in[m] * weight;
      },
      in, weight, n, acc);
}

void clip_row(const int32_t* acc, int64_t n, uint8_t* out) {
  cpu::run_widest(
      [](const int32_t* __restrict acc, int64_t n, uint8_t* __restrict out) TS_INLINE_INTO_CLONE {
        for (int64_t m = 0; m < n; ++m) out[m] = clip8(acc[m]);
      },
      acc, n, out);
}

absl::Status check_box(const Box& box, int64_t height, int64_t width, const char* what) {
  if (box.height < 1 || box.width < 1 || box.top < 0 || box.left < 0 || box.top + box.height > height ||
      box.left + box.width > width) {
    return absl::InvalidArgumentError(absl::StrCat("resize: ", what, " of ", box.height, "x", box.width, " at (",
                                                   box.top, ", ", box.left, ") does not fit in ", height, "x", width));
  }
  return absl::OkStatus();
}

// Horizontal first (Pillow's only order before 13.0): that pass runs on
// the source rows the kept output rows read (taps move forward with the
// output), into 8-bit rows as Pillow's does, stored as C planes so that the
// vertical pass and the callers' loops run over contiguous runs of one
// channel.
void horizontal_then_vertical(const Tensor& image, const ResizeSpec& spec, const Taps& columns, const Taps& rows,
                              absl::FunctionRef<void(int64_t row, const uint8_t* pixels)> emit) {
  const int64_t channels = image.size(0);
  const int64_t first_row = rows.first.front();
  const int64_t row_count = rows.first.back() + rows.count.back() - first_row;
  const int64_t width = spec.keep.width;
  const int64_t plane = row_count * width;
  std::vector<uint8_t> horizontal(channels * plane);
  const uint8_t* base = image.data<uint8_t>() + spec.crop.top * image.stride(1) + spec.crop.left * image.stride(2);
  const bool interleaved = image.stride(0) == 1 && image.stride(2) == channels;
  for (int64_t r = 0; r < row_count; ++r) {
    const uint8_t* row = base + (first_row + r) * image.stride(1);
    if (interleaved && channels == 3) {
      resample_row_rgb(row, 3, columns, horizontal.data() + r * width, plane);
    } else {
      resample_row_strided(row, image.stride(2), image.stride(0), channels, columns, horizontal.data() + r * width,
                           plane);
    }
  }
  std::vector<int32_t> acc(width);
  std::vector<uint8_t> out(channels * width);
  for (int64_t i = 0; i < spec.keep.height; ++i) {
    const int32_t* w = rows.weights.data() + i * rows.ksize;
    for (int64_t c = 0; c < channels; ++c) {
      std::fill(acc.begin(), acc.end(), 1 << (kPrecisionBits - 1));
      for (int64_t t = 0; t < rows.count[i]; ++t) {
        accumulate_row(horizontal.data() + c * plane + (rows.first[i] - first_row + t) * width, w[t], width,
                       acc.data());
      }
      clip_row(acc.data(), width, out.data() + c * width);
    }
    emit(i, out.data());
  }
}

// Vertical first (Pillow 13's order for a mostly vertical downscale): each
// kept output row is the weighted sum of its source rows, over the source
// columns the kept output columns read, rounded to 8 bits as Pillow's
// intermediate image is; then that row is resampled horizontally. Each row
// needs only its own sum, so nothing is kept between rows.
void vertical_then_horizontal(const Tensor& image, const ResizeSpec& spec, const Taps& columns, const Taps& rows,
                              absl::FunctionRef<void(int64_t row, const uint8_t* pixels)> emit) {
  const int64_t channels = image.size(0);
  const int64_t first_column = columns.first.front();
  const int64_t column_count = columns.first.back() + columns.count.back() - first_column;
  Taps local = columns;  // relative to first_column
  for (int64_t& first : local.first) first -= first_column;
  const uint8_t* base =
      image.data<uint8_t>() + spec.crop.top * image.stride(1) + (spec.crop.left + first_column) * image.stride(2);
  // The decoder's interleaved pixels: a row's columns are one run of bytes,
  // summed as one; other layouts channel by channel into C planes.
  const bool interleaved = image.stride(0) == 1 && image.stride(2) == channels;
  const int64_t run = interleaved ? channels * column_count : column_count;
  std::vector<int32_t> acc(run);
  std::vector<uint8_t> vertical(channels * column_count);
  std::vector<uint8_t> out(channels * spec.keep.width);
  for (int64_t i = 0; i < spec.keep.height; ++i) {
    const int32_t* w = rows.weights.data() + i * rows.ksize;
    for (int64_t c = 0; c < (interleaved ? 1 : channels); ++c) {
      std::fill(acc.begin(), acc.end(), 1 << (kPrecisionBits - 1));
      for (int64_t t = 0; t < rows.count[i]; ++t) {
        const uint8_t* row = base + c * image.stride(0) + (rows.first[i] + t) * image.stride(1);
        if (interleaved || image.stride(2) == 1) {
          accumulate_row(row, w[t], run, acc.data());
        } else {
          for (int64_t m = 0; m < run; ++m) acc[m] += row[m * image.stride(2)] * w[t];
        }
      }
      clip_row(acc.data(), run, vertical.data() + c * run);
    }
    if (interleaved && channels == 3) {
      resample_row_rgb(vertical.data(), 3, local, out.data(), spec.keep.width);
    } else if (interleaved) {
      resample_row_strided(vertical.data(), channels, 1, channels, local, out.data(), spec.keep.width);
    } else {
      resample_row_strided(vertical.data(), 1, column_count, channels, local, out.data(), spec.keep.width);
    }
    emit(i, out.data());
  }
}

}  // namespace

ResizeSpec whole_resize(int64_t height, int64_t width, int64_t out_height, int64_t out_width) {
  return ResizeSpec{Box{0, 0, height, width}, out_height, out_width, Box{0, 0, out_height, out_width}};
}

absl::Status resample_bilinear(const Tensor& image, const ResizeSpec& spec,
                               absl::FunctionRef<void(int64_t row, const uint8_t* pixels)> emit) {
  if (!image.defined() || !image.device().is_cpu() || image.dim() != 3 || image.dtype() != DType::kU8 ||
      image.size(0) < 1 || image.size(0) > 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("resize: expected a CPU u8 image [C, H, W] with 1 to 4 channels, got ",
                     image.defined() ? image.describe() : "undefined"));
  }
  RETURN_IF_ERROR(check_box(spec.crop, image.size(1), image.size(2), "crop"));
  RETURN_IF_ERROR(check_box(spec.keep, spec.out_height, spec.out_width, "kept part"));
  const Taps columns = bilinear_taps(spec.crop.width, spec.out_width, spec.keep.left, spec.keep.width);
  const Taps rows = bilinear_taps(spec.crop.height, spec.out_height, spec.keep.top, spec.keep.height);
  // Pillow 13's ImagingResampleInner: the vertical pass first when the
  // height shrinks by more than twice what the width does. The 8-bit
  // intermediate rounds differently in the two orders, by 1 in many pixels.
  const int64_t shrink_height = spec.crop.height - spec.out_height, shrink_width = spec.crop.width - spec.out_width;
  if (shrink_height > 0 && shrink_height > 2 * shrink_width) {
    vertical_then_horizontal(image, spec, columns, rows, emit);
  } else {
    horizontal_then_vertical(image, spec, columns, rows, emit);
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> resample_image(const Tensor& image, const ResizeSpec& spec) {
  if (!image.defined() || image.dim() != 3 || spec.keep.height < 1 || spec.keep.width < 1) {
    return absl::InvalidArgumentError(absl::StrCat("resize: cannot make ", spec.keep.height, "x", spec.keep.width,
                                                   " pixels of ", image.defined() ? image.describe() : "undefined"));
  }
  const int64_t channels = image.size(0), height = spec.keep.height, width = spec.keep.width;
  Tensor out = Tensor::allocate({channels, height, width}, DType::kU8, Device::cpu());
  uint8_t* dst = out.data<uint8_t>();
  RETURN_IF_ERROR(resample_bilinear(image, spec, [&](int64_t row, const uint8_t* pixels) {
    for (int64_t c = 0; c < channels; ++c) {
      std::memcpy(dst + (c * height + row) * width, pixels + c * width, width);
    }
  }));
  return out;
}

absl::StatusOr<Tensor> resize_image(const Tensor& image, int64_t out_height, int64_t out_width) {
  if (!image.defined() || image.dim() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("resize: expected an image [C, H, W], got ", image.defined() ? image.describe() : "undefined"));
  }
  return resample_image(image, whole_resize(image.size(1), image.size(2), out_height, out_width));
}

}  // namespace ts::data::transforms
