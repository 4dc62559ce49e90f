// Volume transforms on CPU for 3D segmentation (the SC21 U-Net recipe): a
// random crop and random reflections / rotations by 90 degrees of [..., D,
// H, W] tensors, drawn once per example and applied identically to the image
// volume and its label volume.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "data/loader/random_stream.h"
#include "data/loader/transform.h"
#include "tensor/tensor.h"

namespace ts::data::transforms {

struct Box3d {
  int64_t d = 0, h = 0, w = 0;
};

// The window [offset, offset + size) of the last three dims (no padding: the
// window must lie inside the volume).
absl::StatusOr<Tensor> crop_volume(const Tensor& volume, Box3d offset, Box3d size);

// Reflections along D, H and W, then a rotation by rot90 * 90 degrees in the
// (H, W) plane from H towards W (numpy.rot90 with axes (H, W)). An odd
// rotation needs H == W, so the shape is unchanged.
struct FlipRot3d {
  bool flip_d = false, flip_h = false, flip_w = false;
  int rot90 = 0;  // 0..3
};
absl::StatusOr<Tensor> flip_rotate_volume(const Tensor& volume, FlipRot3d params);

// Transforms of the listed fields (by default the image and the label), all
// of which must share their last three dims.
Transform random_crop_3d(Box3d size, std::vector<int> fields = {0, 1});
// Each reflection with probability flip_probability; with `rotate`, a
// uniform rotation of 0..3 quarter turns when H == W.
Transform random_flip_rotate_3d(double flip_probability = 0.5, bool rotate = true, std::vector<int> fields = {0, 1});

}  // namespace ts::data::transforms
