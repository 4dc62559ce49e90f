// Resizing 8-bit images as Pillow 13's Image.resize(size, Image.BILINEAR)
// does, pixel for pixel: a separable two-pass resampler whose triangle filter
// widens with the downscale factor, so a downscale averages every input pixel
// it covers (antialiasing) rather than sampling four. The taps are Pillow's:
// computed in double, normalized, rounded to 22-bit fixed point. The passes
// meet in an 8-bit intermediate, so their order shows in the pixels (by one
// level): the horizontal pass first, except where the height shrinks by
// more than twice what the width does (H_in - H_out > 0 and
// > 2 (W_in - W_out)), where Pillow 13.0's ImagingResampleInner runs the
// vertical pass first. Pillow 12 and before always went horizontal first,
// so those resizes differ from theirs.
#pragma once

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "tensor/tensor.h"

namespace ts::data::transforms {

// Rows [top, top + height) and columns [left, left + width) of an image.
struct Box {
  int64_t top = 0;
  int64_t left = 0;
  int64_t height = 0;
  int64_t width = 0;
};

// `crop` of an image resized to out_height x out_width, as Pillow's
// image.crop(crop).resize((out_width, out_height), BILINEAR) (torchvision's
// resized_crop): the filter reads nothing outside the crop, and the pass
// order follows the crop's size (Pillow's resize(..., box=crop) is another
// thing: it picks the order by the whole image's size). Only the part `keep`
// of the resized image is computed (a center crop after a resize costs only
// the pixels kept); its pixels equal those of the whole resize cropped
// afterwards, in either pass order.
struct ResizeSpec {
  Box crop;
  int64_t out_height = 0;
  int64_t out_width = 0;
  Box keep;
};

// The spec of a plain resize of a height x width image: no crop, all kept.
ResizeSpec whole_resize(int64_t height, int64_t width, int64_t out_height, int64_t out_width);

// Resamples u8 `image` [C, H, W] (any strides: a permuted [H, W, C] decode
// reads in place) by `spec` and hands each row of `keep` to emit(row, pixels)
// in order, channel by channel (C runs of keep.width bytes, valid during the
// call), so the caller stores, flips or normalizes the row in the same pass.
// Errors for an image that is not u8 [C, H, W] on the CPU or a spec that does
// not fit.
absl::Status resample_bilinear(const Tensor& image, const ResizeSpec& spec,
                               absl::FunctionRef<void(int64_t row, const uint8_t* pixels)> emit);

// The same into a new u8 [C, keep.height, keep.width] (contiguous).
absl::StatusOr<Tensor> resample_image(const Tensor& image, const ResizeSpec& spec);

// u8 [C, H, W] -> u8 [C, out_height, out_width].
absl::StatusOr<Tensor> resize_image(const Tensor& image, int64_t out_height, int64_t out_width);

}  // namespace ts::data::transforms
