// From JPEG file bytes to a network's input in one pass per stage, as the
// loader's workers run it for ImageNet-style folders (data/sets/image_folder):
// the header is read first, so the crop is known before decoding; for
// training the JPEG is decoded at the smallest libjpeg scale (1, 1/2, 1/4,
// 1/8) that still leaves the crop at least as large as the output (the
// resize stays a downscale); the crop, the resize, the flip, the
// normalization and the HWC-to-CHW layout change are one resampling pass
// writing f32 [3, S, S]. At scale 1 the result equals, bit for bit, decoding
// then applying the Transforms random_resized_crop, random_horizontal_flip
// and normalize, which draw the same numbers from the stream. A reduced
// scale is what DALI does too: the DCT's own downscale replaces part of the
// triangle filter's, and the crop box moves by less than one scaled pixel
// (its edges round outward to the scaled grid). Evaluation always decodes at
// full scale, so it equals resize_center_crop and normalize bit for bit:
// the validation accuracy is measured on torchvision's pixels. A file whose
// content is a PNG (by its signature, whatever its name, as torchvision's
// loader opens it) is decoded by data/readers/png, always at full scale, and
// goes through the same steps.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "data/loader/random_stream.h"
#include "data/transforms/resized_crop.h"
#include "tensor/tensor.h"

namespace ts::data::transforms {

// A JPEG (or PNG) file's bytes (`name`, the file, labels errors) to a
// tensor, drawing random choices from the sample's stream. A file that does
// not decode is kDataLoss; one whose decode needs memory that is not there,
// kResourceExhausted; both name the file.
using JpegPipeline =
    std::function<absl::StatusOr<Tensor>(absl::string_view jpeg, absl::string_view name, RandomStream& rng)>;

// ImageNet's channel statistics (RGB, pixels in [0, 1]), as torchvision's
// reference recipes normalize.
inline const std::vector<float> kImageNetMean = {0.485f, 0.456f, 0.406f};
inline const std::vector<float> kImageNetStd = {0.229f, 0.224f, 0.225f};

// Decodes to u8 [3, H, W] (contiguous), nothing more.
JpegPipeline decode_pipeline();

// RandomResizedCrop + RandomHorizontalFlip(flip_probability) + Normalize:
// f32 [3, size, size].
JpegPipeline train_pipeline(RandomResizedCropOptions crop = {}, double flip_probability = 0.5,
                            std::vector<float> mean = kImageNetMean, std::vector<float> std = kImageNetStd);

// Resize(shorter) + CenterCrop(crop) + Normalize: f32 [3, crop, crop].
JpegPipeline eval_pipeline(int64_t shorter = 256, int64_t crop = 224, std::vector<float> mean = kImageNetMean,
                           std::vector<float> std = kImageNetStd);

}  // namespace ts::data::transforms
