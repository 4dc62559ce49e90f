// Image transforms on CPU for [C, H, W] examples: to-float with per-channel
// normalization, random crop with zero padding, horizontal flip, centered
// padding to a size. Each is a plain function of its parameters (used by the
// GPU batch versions' tests too) and a Transform factory that draws the
// parameters from the sample's RandomStream.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "data/loader/random_stream.h"
#include "data/loader/transform.h"
#include "tensor/tensor.h"

namespace ts::data::transforms {

// f32 (x * scale - mean[c]) / std[c] for channel c (dim 0), with scale 1/255
// for u8 input and 1 for floating input. mean and std have one entry per
// channel; std entries must be positive.
absl::StatusOr<Tensor> normalize_image(const Tensor& image, absl::Span<const float> mean, absl::Span<const float> std);
// Normalization as one multiply-add per element, shared by the CPU and GPU
// paths: {a_0, b_0, a_1, b_1, ...} with out = x * a_c + b_c. Errors as
// normalize_image's (counts, non-positive std, dtype).
absl::StatusOr<std::vector<float>> normalize_coefficients(DType dtype, int64_t channels, absl::Span<const float> mean,
                                                          absl::Span<const float> std);

// A crop of an image zero-padded by `padding` on every side: rows
// [top, top + out_h) and columns [left, left + out_w) of the padded image,
// mirrored left to right when `flip` (a flip after the crop, as torchvision's
// RandomCrop then RandomHorizontalFlip).
struct CropFlip {
  int64_t top = 0;
  int64_t left = 0;
  bool flip = false;
};
absl::StatusOr<Tensor> crop_flip_image(const Tensor& image, int64_t out_h, int64_t out_w, int64_t padding,
                                       CropFlip params);
// Uniform crop offsets for an h x w image (the flip is left false).
CropFlip draw_crop(RandomStream& rng, int64_t h, int64_t w, int64_t out_h, int64_t out_w, int64_t padding);

// The image centered in an out_h x out_w zero canvas (Fashion-MNIST's
// 28x28 to ResNet-20's 32x32): (out - in) / 2 zeros before, the rest after.
absl::StatusOr<Tensor> pad_image(const Tensor& image, int64_t out_h, int64_t out_w);

// Transforms of field `field` of an example (the image; other fields pass
// through).
Transform normalize(std::vector<float> mean, std::vector<float> std, int field = 0);
Transform random_crop(int64_t out_h, int64_t out_w, int64_t padding, int field = 0);
Transform random_horizontal_flip(double probability = 0.5, int field = 0);
Transform pad_to(int64_t out_h, int64_t out_w, int field = 0);

// The example's field `field`, or an error naming the transform.
absl::StatusOr<Tensor*> field_of(Example& example, int field, const char* transform);

}  // namespace ts::data::transforms
