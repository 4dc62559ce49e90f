#include "data/synthetic/images.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/loader/random_stream.h"
#include "data/synthetic/options_check.h"

namespace ts::data {
namespace {

// Separate stream families for the templates, the labels and the pixels.
constexpr uint64_t kTemplateSalt = 1, kLabelSalt = 2, kPixelSalt = 3;

}  // namespace

absl::StatusOr<std::unique_ptr<SyntheticImages>> SyntheticImages::create(SyntheticImageOptions options) {
  RETURN_IF_ERROR(check_at_least("SyntheticImages", "size", options.size, 0));
  RETURN_IF_ERROR(check_at_least("SyntheticImages", "channels", options.channels, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticImages", "height", options.height, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticImages", "width", options.width, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticImages", "num_classes", options.num_classes, 1));
  if (options.dtype != DType::kU8 && options.dtype != DType::kF32) {
    return absl::InvalidArgumentError(
        absl::StrCat("SyntheticImages: dtype must be u8 or f32, got ", dtype_name(options.dtype)));
  }
  if (!(options.noise >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("SyntheticImages: noise must be >= 0, got ", options.noise));
  }
  return std::unique_ptr<SyntheticImages>(new SyntheticImages(options));
}

SyntheticImages::SyntheticImages(SyntheticImageOptions options) : options_(options) {
  const int64_t per_class = options_.channels * kGrid * kGrid;
  coarse_.resize(options_.num_classes * per_class);
  for (int64_t k = 0; k < options_.num_classes; ++k) {
    RandomStream rng(RandomStream::key_for(options_.seed, SeedUse::kSynthetic, kTemplateSalt), k);
    for (int64_t i = 0; i < per_class; ++i) coarse_[k * per_class + i] = static_cast<float>(2 * rng.uniform() - 1);
  }
}

int64_t SyntheticImages::label_of(int64_t index) const {
  RandomStream rng(RandomStream::key_for(options_.seed, SeedUse::kSynthetic, kLabelSalt),
                   options_.first_sample + index);
  return rng.uniform_int(options_.num_classes);
}

absl::StatusOr<Example> SyntheticImages::get(int64_t index) const {
  RETURN_IF_ERROR(check_index("SyntheticImages", index, options_.size));
  const int64_t label = label_of(index);
  const int64_t c = options_.channels, h = options_.height, w = options_.width;
  Tensor image = Tensor::allocate({c, h, w}, options_.dtype, Device::cpu());
  Tensor label_tensor = Tensor::allocate({}, DType::kI64, Device::cpu());
  *label_tensor.data<int64_t>() = label;

  RandomStream rng(RandomStream::key_for(options_.seed, SeedUse::kSynthetic, kPixelSalt),
                   options_.first_sample + index);
  const float* pattern = coarse_.data() + label * c * kGrid * kGrid;
  const float amplitude = static_cast<float>(options_.noise);
  // Two noise values per 32-bit draw (16 bits each): generation stays cheap
  // next to the loader's own work.
  uint32_t bits = 0;
  bool have_half = false;
  auto noise = [&]() {
    if (!have_half) bits = rng.next_u32();
    const uint32_t half = have_half ? bits >> 16 : bits & 0xFFFF;
    have_half = !have_half;
    return amplitude * (static_cast<float>(half) * (2.0f / 65535.0f) - 1.0f);
  };
  uint8_t* out_u8 = options_.dtype == DType::kU8 ? image.data<uint8_t>() : nullptr;
  float* out_f32 = options_.dtype == DType::kF32 ? image.data<float>() : nullptr;
  for (int64_t ci = 0; ci < c; ++ci) {
    for (int64_t y = 0; y < h; ++y) {
      const float* row = pattern + (ci * kGrid + y * kGrid / h) * kGrid;
      const int64_t offset = (ci * h + y) * w;
      for (int64_t x = 0; x < w; ++x) {
        const float value = row[x * kGrid / w] + noise();
        if (out_u8 != nullptr) {
          out_u8[offset + x] = static_cast<uint8_t>(std::clamp(std::lround(128.0f + 48.0f * value), 0L, 255L));
        } else {
          out_f32[offset + x] = value;
        }
      }
    }
  }
  return Example{{std::move(image), std::move(label_tensor)}};
}

}  // namespace ts::data
