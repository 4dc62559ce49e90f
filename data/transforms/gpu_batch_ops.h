// The transforms for a batch already on a CUDA device (the DALI path of the
// SC21 recipe): normalization, crop with padding plus horizontal flip, and
// volume reflections / quarter turns, each one kernel over the whole batch
// on the device's current stream. Per-sample parameters are drawn on the host
// (with the CPU transforms' draw functions) so both paths agree exactly.
#pragma once

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "data/transforms/image.h"
#include "data/transforms/volume.h"
#include "tensor/tensor.h"

namespace ts::data::transforms {

// [N, C, ...] u8 or f32 on CUDA -> f32, as normalize_image per sample.
absl::StatusOr<Tensor> normalize_batch(const Tensor& batch, absl::Span<const float> mean, absl::Span<const float> std);

// [N, C, H, W] on CUDA -> [N, C, out_h, out_w], sample n as
// crop_flip_image(sample, out_h, out_w, padding, params[n]).
absl::StatusOr<Tensor> crop_flip_batch(const Tensor& batch, int64_t out_h, int64_t out_w, int64_t padding,
                                       absl::Span<const CropFlip> params);

// [N, ..., D, H, W] on CUDA, sample n as flip_rotate_volume(sample, params[n]).
absl::StatusOr<Tensor> flip_rotate_volume_batch(const Tensor& batch, absl::Span<const FlipRot3d> params);

}  // namespace ts::data::transforms
