// A synthetic 3D segmentation set (the SC21 U-Net / KiTS19 shapes): each
// sample is a volume with nested random ellipsoids, one per foreground class,
// whose voxels have class-dependent intensity plus noise; the label volume
// marks the classes. Generated in get() from (seed, i); learnable voxel by
// voxel.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "data/dataset.h"

namespace ts::data {

struct SyntheticVolumeOptions {
  int64_t size = 168;  // KiTS19's training cases
  int64_t channels = 1;
  int64_t depth = 128;
  int64_t height = 128;
  int64_t width = 128;
  int64_t num_classes = 3;  // background, kidney, tumor
  // Intensity of class k is -1 + 2k / (num_classes - 1); noise is uniform in
  // [-noise, noise]: above half the spacing of the levels, so neighbouring
  // classes overlap and voxel accuracy stays below 100%.
  double noise = 0.75;
  uint64_t seed = 0;
};

// get(i) gives {image f32 [C, D, H, W], label u8 [1, D, H, W]} with labels
// in [0, num_classes).
class SyntheticVolumes : public Dataset {
 public:
  static absl::StatusOr<std::unique_ptr<SyntheticVolumes>> create(SyntheticVolumeOptions options);

  int64_t size() const override { return options_.size; }
  absl::StatusOr<Example> get(int64_t index) const override;
  // The intensity every voxel of `label` is drawn around.
  float class_intensity(int64_t label) const;

 private:
  explicit SyntheticVolumes(SyntheticVolumeOptions options) : options_(options) {}
  SyntheticVolumeOptions options_;
};

}  // namespace ts::data
