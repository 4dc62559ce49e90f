// A synthetic image classification set of any shape (Fashion-MNIST's 1x28x28
// u8 by default): sample i is its class's template plus noise, generated in
// get() from (seed, i), so it costs no memory and a classifier can learn it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "data/dataset.h"
#include "tensor/dtype.h"

namespace ts::data {

struct SyntheticImageOptions {
  int64_t size = 60000;
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int64_t num_classes = 10;
  // u8: pixels 128 + 48 * value, clamped to 0..255; f32: the value itself.
  DType dtype = DType::kU8;
  // Noise amplitude (uniform in [-noise, noise]) against templates in [-1, 1].
  double noise = 1.0;
  uint64_t seed = 0;
  // Sample i is the generator's sample first_sample + i: a test split with
  // the same seed (same class templates) and first_sample past the training
  // split's size holds fresh samples.
  int64_t first_sample = 0;
};

// get(i) gives {image [C, H, W] of the chosen dtype, label i64 scalar}.
class SyntheticImages : public Dataset {
 public:
  // Errors name the option that is out of range.
  static absl::StatusOr<std::unique_ptr<SyntheticImages>> create(SyntheticImageOptions options);

  int64_t size() const override { return options_.size; }
  absl::StatusOr<Example> get(int64_t index) const override;
  int64_t label_of(int64_t index) const;

 private:
  // Each class's template is a coarse kGrid x kGrid pattern per channel,
  // upsampled by nearest neighbour: cheap to hold and far apart between
  // classes relative to the per-pixel noise.
  static constexpr int64_t kGrid = 4;
  explicit SyntheticImages(SyntheticImageOptions options);

  SyntheticImageOptions options_;
  std::vector<float> coarse_;  // [classes, channels, kGrid, kGrid]
};

}  // namespace ts::data
