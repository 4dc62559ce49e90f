#include "data/transforms/resized_crop.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/transforms/image.h"

namespace ts::data::transforms {
namespace {

// Python's int(round(x)): half to even (the default rounding mode).
int64_t round_half_even(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

}  // namespace

Box draw_resized_crop(RandomStream& rng, int64_t height, int64_t width, const RandomResizedCropOptions& options) {
  const double area = static_cast<double>(height) * width;
  const double log_min = std::log(options.min_ratio), log_max = std::log(options.max_ratio);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * (options.min_scale + (options.max_scale - options.min_scale) * rng.uniform());
    const double aspect_ratio = std::exp(log_min + (log_max - log_min) * rng.uniform());
    const int64_t w = round_half_even(std::sqrt(target_area * aspect_ratio));
    const int64_t h = round_half_even(std::sqrt(target_area / aspect_ratio));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int64_t top = rng.uniform_int(height - h + 1);
      const int64_t left = rng.uniform_int(width - w + 1);
      return Box{top, left, h, w};
    }
  }
  const double in_ratio = static_cast<double>(width) / height;
  int64_t w = width, h = height;
  if (in_ratio < std::min(options.min_ratio, options.max_ratio)) {
    h = round_half_even(w / std::min(options.min_ratio, options.max_ratio));
  } else if (in_ratio > std::max(options.min_ratio, options.max_ratio)) {
    w = round_half_even(h * std::max(options.min_ratio, options.max_ratio));
  }
  return Box{(height - h) / 2, (width - w) / 2, h, w};
}

Size shorter_side_size(int64_t height, int64_t width, int64_t shorter) {
  const int64_t short_side = std::min(height, width), long_side = std::max(height, width);
  const int64_t new_long = static_cast<int64_t>(static_cast<double>(shorter * long_side) / short_side);
  return width <= height ? Size{new_long, shorter} : Size{shorter, new_long};
}

Box center_crop_box(int64_t height, int64_t width, int64_t crop) {
  return Box{round_half_even((height - crop) / 2.0), round_half_even((width - crop) / 2.0), crop, crop};
}

ResizeSpec resize_center_crop_spec(int64_t height, int64_t width, int64_t shorter, int64_t crop) {
  const Size resized = shorter_side_size(height, width, shorter);
  return ResizeSpec{Box{0, 0, height, width}, resized.height, resized.width,
                    center_crop_box(resized.height, resized.width, crop)};
}

Transform random_resized_crop(RandomResizedCropOptions options, int field) {
  return [options, field](Example example, RandomStream& rng) -> absl::StatusOr<Example> {
    ASSIGN_OR_RETURN(Tensor * image, field_of(example, field, "random_resized_crop"));
    // torchvision's RandomResizedCrop warns of unordered ranges and goes on
    // with them; a ratio of 0 would take the log of 0.
    if (options.size < 1 || !(0 < options.min_scale && options.min_scale <= options.max_scale) ||
        !(0 < options.min_ratio && options.min_ratio <= options.max_ratio)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "random_resized_crop: size ", options.size, ", scale [", options.min_scale, ", ", options.max_scale,
          "] and ratio [", options.min_ratio, ", ", options.max_ratio, "] must be positive and in order"));
    }
    if (!image->defined() || image->dim() != 3 || image->size(1) < 1 || image->size(2) < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("random_resized_crop: expected an image [C, H, W] of H, W >= 1, got ",
                       image->defined() ? image->describe() : "undefined"));
    }
    const Box box = draw_resized_crop(rng, image->size(1), image->size(2), options);
    ASSIGN_OR_RETURN(*image, resample_image(*image, ResizeSpec{box, options.size, options.size,
                                                               Box{0, 0, options.size, options.size}}));
    return example;
  };
}

Transform resize_center_crop(int64_t shorter, int64_t crop, int field) {
  return [shorter, crop, field](Example example, RandomStream&) -> absl::StatusOr<Example> {
    ASSIGN_OR_RETURN(Tensor * image, field_of(example, field, "resize_center_crop"));
    if (!image->defined() || image->dim() != 3 || image->size(1) < 1 || image->size(2) < 1 || crop > shorter) {
      return absl::InvalidArgumentError(absl::StrCat("resize_center_crop: cannot crop ", crop, "x", crop,
                                                     " after resizing the shorter side to ", shorter, " of ",
                                                     image->defined() ? image->describe() : "undefined"));
    }
    ASSIGN_OR_RETURN(*image,
                     resample_image(*image, resize_center_crop_spec(image->size(1), image->size(2), shorter, crop)));
    return example;
  };
}

}  // namespace ts::data::transforms
