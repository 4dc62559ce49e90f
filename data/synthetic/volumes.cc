#include "data/synthetic/volumes.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/loader/random_stream.h"
#include "data/synthetic/options_check.h"

namespace ts::data {
namespace {

constexpr uint64_t kShapeSalt = 11, kVoxelSalt = 12;

// An axis-aligned ellipsoid in normalized coordinates ([0, 1] per axis).
struct Ellipsoid {
  double center[3];
  double inv_radius_sq[3];
  bool contains(double z, double y, double x) const {
    const double dz = z - center[0], dy = y - center[1], dx = x - center[2];
    return dz * dz * inv_radius_sq[0] + dy * dy * inv_radius_sq[1] + dx * dx * inv_radius_sq[2] <= 1.0;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<SyntheticVolumes>> SyntheticVolumes::create(SyntheticVolumeOptions options) {
  RETURN_IF_ERROR(check_at_least("SyntheticVolumes", "size", options.size, 0));
  RETURN_IF_ERROR(check_at_least("SyntheticVolumes", "channels", options.channels, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticVolumes", "depth", options.depth, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticVolumes", "height", options.height, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticVolumes", "width", options.width, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticVolumes", "num_classes", options.num_classes, 2));
  if (options.num_classes > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("SyntheticVolumes: num_classes must fit a u8 label, got ", options.num_classes));
  }
  if (!(options.noise >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("SyntheticVolumes: noise must be >= 0, got ", options.noise));
  }
  return std::unique_ptr<SyntheticVolumes>(new SyntheticVolumes(options));
}

float SyntheticVolumes::class_intensity(int64_t label) const {
  return static_cast<float>(-1.0 + 2.0 * label / (options_.num_classes - 1));
}

absl::StatusOr<Example> SyntheticVolumes::get(int64_t index) const {
  RETURN_IF_ERROR(check_index("SyntheticVolumes", index, options_.size));
  const int64_t c = options_.channels, d = options_.depth, h = options_.height, w = options_.width;

  // Class k's ellipsoid sits inside class k-1's: centers near the middle,
  // radii shrinking with k, so every class appears in every sample.
  RandomStream shape_rng(RandomStream::key_for(options_.seed, SeedUse::kSynthetic, kShapeSalt), index);
  std::vector<Ellipsoid> shapes(options_.num_classes - 1);
  double scale = 1.0;
  for (size_t k = 0; k < shapes.size(); ++k) {
    Ellipsoid& e = shapes[k];
    if (k > 0) scale *= 0.5 + 0.2 * shape_rng.uniform();
    for (int a = 0; a < 3; ++a) {
      e.center[a] = 0.5 + (shape_rng.uniform() - 0.5) * 0.1;
      const double radius = scale * (0.25 + 0.2 * shape_rng.uniform());
      e.inv_radius_sq[a] = 1.0 / (radius * radius);
    }
  }

  Tensor label = Tensor::allocate({1, d, h, w}, DType::kU8, Device::cpu());
  uint8_t* labels = label.data<uint8_t>();
  for (int64_t z = 0; z < d; ++z) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        const double nz = (z + 0.5) / d, ny = (y + 0.5) / h, nx = (x + 0.5) / w;
        uint8_t k = 0;
        while (k < shapes.size() && shapes[k].contains(nz, ny, nx)) ++k;
        labels[(z * h + y) * w + x] = k;
      }
    }
  }

  Tensor image = Tensor::allocate({c, d, h, w}, DType::kF32, Device::cpu());
  float* voxels = image.data<float>();
  RandomStream voxel_rng(RandomStream::key_for(options_.seed, SeedUse::kSynthetic, kVoxelSalt), index);
  const float amplitude = static_cast<float>(options_.noise);
  const int64_t per_channel = d * h * w;
  for (int64_t ci = 0; ci < c; ++ci) {
    for (int64_t i = 0; i < per_channel; ++i) {
      const float u = static_cast<float>(voxel_rng.next_u32()) * (2.0f / 4294967295.0f) - 1.0f;
      voxels[ci * per_channel + i] = class_intensity(labels[i]) + amplitude * u;
    }
  }
  return Example{{std::move(image), std::move(label)}};
}

}  // namespace ts::data
