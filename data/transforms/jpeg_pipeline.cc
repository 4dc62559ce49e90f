#include "data/transforms/jpeg_pipeline.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "data/readers/jpeg.h"
#include "data/readers/png.h"
#include "data/transforms/image.h"
#include "tensor/ops.h"

namespace ts::data::transforms {
namespace {

// Resamples the decoded u8 [H, W, 3] by `spec` straight into normalized f32
// [3, keep.height, keep.width], mirrored left to right when `flip`.
// `coeffs` are normalize_coefficients' {a_c, b_c}: out = x * a_c + b_c, the
// same float operations as normalize_image.
absl::StatusOr<Tensor> resample_normalized(const Tensor& hwc, const ResizeSpec& spec, bool flip,
                                           const std::vector<float>& coeffs) {
  const int64_t height = spec.keep.height, width = spec.keep.width;
  Tensor out = Tensor::allocate({3, height, width}, DType::kF32, Device::cpu());
  float* dst = out.data<float>();
  RETURN_IF_ERROR(resample_bilinear(hwc.permute({2, 0, 1}), spec, [&](int64_t row, const uint8_t* pixels) {
    for (int64_t c = 0; c < 3; ++c) {
      const float a = coeffs[2 * c], b = coeffs[2 * c + 1];
      const uint8_t* in = pixels + c * width;
      float* plane_row = dst + (c * height + row) * width;
      if (flip) {
        for (int64_t x = 0; x < width; ++x) plane_row[width - 1 - x] = static_cast<float>(in[x]) * a + b;
      } else {
        for (int64_t x = 0; x < width; ++x) plane_row[x] = static_cast<float>(in[x]) * a + b;
      }
    }
  }));
  return out;
}

// The full-size `box` on the grid of the image decoded at 1/denominator,
// its edges rounded outward (and clamped to the scaled image).
Box scaled_box(const Box& box, int denominator, int64_t scaled_height, int64_t scaled_width) {
  const int64_t top = box.top / denominator, left = box.left / denominator;
  const int64_t bottom = std::min(jpeg_scaled_size(box.top + box.height, denominator), scaled_height);
  const int64_t right = std::min(jpeg_scaled_size(box.left + box.width, denominator), scaled_width);
  return Box{top, left, bottom - top, right - left};
}

// What a file's content says it is, as Pillow's Image.open (and so
// torchvision's loader) tells formats apart, whatever its name: ImageNet's
// train set holds a PNG named .JPEG. A PNG has no reduced-scale decode.
struct ImageHeader {
  int64_t height = 0;
  int64_t width = 0;
  bool png = false;
};

absl::StatusOr<ImageHeader> read_image_header(absl::string_view bytes, absl::string_view name) {
  if (is_png(bytes)) {
    ASSIGN_OR_RETURN(const PngHeader png, read_png_header(bytes, name));
    return ImageHeader{png.height, png.width, /*png=*/true};
  }
  ASSIGN_OR_RETURN(const JpegHeader jpeg, read_jpeg_header(bytes, name));
  return ImageHeader{jpeg.height, jpeg.width, /*png=*/false};
}

// Decodes into this thread's buffer, kept across images (up to 16 MiB: a
// 2300x2300 image; larger ones get a buffer of their own), viewed as u8
// [H, W, 3]: a fresh one per image would fault in every page of it. The view
// is valid until the thread decodes again. Memory that is not there is an
// error naming the file (kResourceExhausted), as the decoders' own are.
absl::StatusOr<Tensor> decode_scaled(absl::string_view bytes, absl::string_view name, const ImageHeader& header,
                                     int denominator) {
  constexpr int64_t kKeptBytes = int64_t{16} << 20;
  thread_local std::shared_ptr<Storage> kept;
  const int64_t height = jpeg_scaled_size(header.height, denominator);
  const int64_t width = jpeg_scaled_size(header.width, denominator);
  const int64_t size = height * width * 3;
  std::shared_ptr<Storage> storage = kept;
  if (storage == nullptr || storage->nbytes() < size) {
    absl::StatusOr<std::shared_ptr<Storage>> fresh = capture([&] { return Storage::allocate(size, Device::cpu()); });
    if (!fresh.ok()) {
      return absl::ResourceExhaustedError(
          absl::StrCat(name, ": out of memory decoding a ", width, "x", height, " image: ", fresh.status().message()));
    }
    storage = *std::move(fresh);
    if (size <= kKeptBytes) kept = storage;
  }
  const Tensor rgb(std::move(storage), Shape{height, width, 3}, Shape{width * 3, 3, 1}, 0, DType::kU8);
  if (header.png) {
    RETURN_IF_ERROR(decode_png_into(bytes, name, kMaxPngPixels, rgb));
  } else {
    JpegDecodeOptions options;
    options.scale_denominator = denominator;
    RETURN_IF_ERROR(decode_jpeg_into(bytes, name, options, rgb));
  }
  return rgb;
}

}  // namespace

JpegPipeline decode_pipeline() {
  return [](absl::string_view bytes, absl::string_view name, RandomStream&) -> absl::StatusOr<Tensor> {
    ASSIGN_OR_RETURN(const Tensor hwc, is_png(bytes) ? decode_png(bytes, name) : decode_jpeg(bytes, name));
    return contiguous(hwc.permute({2, 0, 1}));
  };
}

JpegPipeline train_pipeline(RandomResizedCropOptions crop, double flip_probability, std::vector<float> mean,
                            std::vector<float> std) {
  absl::StatusOr<std::vector<float>> coeffs = normalize_coefficients(DType::kU8, 3, mean, std);
  return [crop, flip_probability, coeffs = std::move(coeffs)](absl::string_view bytes, absl::string_view name,
                                                              RandomStream& rng) -> absl::StatusOr<Tensor> {
    RETURN_IF_ERROR(coeffs.status());
    ASSIGN_OR_RETURN(const ImageHeader header, read_image_header(bytes, name));
    const Box box = draw_resized_crop(rng, header.height, header.width, crop);
    const bool flip = rng.bernoulli(flip_probability);
    const int denominator = header.png ? 1 : jpeg_scale_denominator(box.height, box.width, crop.size, crop.size);
    ASSIGN_OR_RETURN(const Tensor hwc, decode_scaled(bytes, name, header, denominator));
    const Box scaled = denominator == 1 ? box : scaled_box(box, denominator, hwc.size(0), hwc.size(1));
    return resample_normalized(hwc, ResizeSpec{scaled, crop.size, crop.size, Box{0, 0, crop.size, crop.size}}, flip,
                               *coeffs);
  };
}

JpegPipeline eval_pipeline(int64_t shorter, int64_t crop, std::vector<float> mean, std::vector<float> std) {
  absl::StatusOr<std::vector<float>> coeffs = normalize_coefficients(DType::kU8, 3, mean, std);
  return [shorter, crop, coeffs = std::move(coeffs)](absl::string_view bytes, absl::string_view name,
                                                     RandomStream&) -> absl::StatusOr<Tensor> {
    RETURN_IF_ERROR(coeffs.status());
    if (crop > shorter) {
      return absl::InvalidArgumentError(
          absl::StrCat("eval_pipeline: a center crop of ", crop, " exceeds the resized shorter side ", shorter));
    }
    ASSIGN_OR_RETURN(const ImageHeader header, read_image_header(bytes, name));
    const Size resized = shorter_side_size(header.height, header.width, shorter);
    // Always at full scale: the validation accuracy is then measured on
    // torchvision's pixels (a reduced-scale decode would move them by a few
    // levels on large images), at a cost only the rare large image pays.
    ASSIGN_OR_RETURN(const Tensor hwc, decode_scaled(bytes, name, header, /*denominator=*/1));
    const ResizeSpec spec{Box{0, 0, hwc.size(0), hwc.size(1)}, resized.height, resized.width,
                          center_crop_box(resized.height, resized.width, crop)};
    return resample_normalized(hwc, spec, /*flip=*/false, *coeffs);
  };
}

}  // namespace ts::data::transforms
