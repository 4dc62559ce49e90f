#include "data/transforms/image.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/transforms/remap.h"
#include "tensor/ops.h"

namespace ts::data::transforms {
namespace {

absl::Status check_image(const Tensor& image, const char* op) {
  // An empty image is refused whatever the transform's random draw, so a
  // flip fails on it every time rather than half the time.
  if (!image.defined() || !image.device().is_cpu() || image.dim() != 3 || image.size(1) < 1 || image.size(2) < 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": expected a CPU image [C, H, W] of H, W >= 1, got ",
                                                   image.defined() ? image.describe() : "undefined"));
  }
  return absl::OkStatus();
}

// Applies f to field `field` of the example.
template <typename F>
Transform on_field(int field, const char* name, F f) {
  return [field, name, f = std::move(f)](Example example, RandomStream& rng) -> absl::StatusOr<Example> {
    ASSIGN_OR_RETURN(Tensor * t, field_of(example, field, name));
    ASSIGN_OR_RETURN(*t, f(*t, rng));
    return example;
  };
}

}  // namespace

absl::StatusOr<Tensor*> field_of(Example& example, int field, const char* transform) {
  if (field < 0 || static_cast<size_t>(field) >= example.fields.size()) {
    return absl::InvalidArgumentError(absl::StrCat(transform, ": field ", field, " does not exist (the example has ",
                                                   example.fields.size(), " fields)"));
  }
  return &example.fields[field];
}

absl::StatusOr<std::vector<float>> normalize_coefficients(DType dtype, int64_t channels, absl::Span<const float> mean,
                                                          absl::Span<const float> std) {
  if (static_cast<int64_t>(mean.size()) != channels || static_cast<int64_t>(std.size()) != channels) {
    return absl::InvalidArgumentError(
        absl::StrCat("normalize: ", mean.size(), " means and ", std.size(), " stds for ", channels, " channels"));
  }
  if (dtype != DType::kU8 && !is_floating(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("normalize: expected u8 or floating pixels, got ", dtype_name(dtype)));
  }
  const float scale = dtype == DType::kU8 ? 1.0f / 255.0f : 1.0f;
  std::vector<float> coeffs(2 * channels);
  for (int64_t c = 0; c < channels; ++c) {
    if (!(std[c] > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("normalize: std ", std[c], " of channel ", c, " is not positive"));
    }
    coeffs[2 * c] = scale / std[c];
    coeffs[2 * c + 1] = -mean[c] / std[c];
  }
  return coeffs;
}

absl::StatusOr<Tensor> normalize_image(const Tensor& image, absl::Span<const float> mean, absl::Span<const float> std) {
  if (!image.defined() || !image.device().is_cpu() || image.dim() < 1) {
    return absl::InvalidArgumentError(absl::StrCat("normalize: expected a CPU tensor [C, ...], got ",
                                                   image.defined() ? image.describe() : "undefined"));
  }
  const int64_t channels = image.size(0);
  ASSIGN_OR_RETURN(std::vector<float> coeffs, normalize_coefficients(image.dtype(), channels, mean, std));
  const bool bytes = image.dtype() == DType::kU8;
  const Tensor src = bytes ? contiguous(image) : to(contiguous(image), DType::kF32);
  Tensor out = Tensor::allocate(image.shape(), DType::kF32, Device::cpu());
  const int64_t plane = channels == 0 ? 0 : image.numel() / channels;
  float* dst = out.data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    const float a = coeffs[2 * c], b = coeffs[2 * c + 1];
    float* o = dst + c * plane;
    if (bytes) {
      const uint8_t* in = src.data<uint8_t>() + c * plane;
      for (int64_t i = 0; i < plane; ++i) o[i] = static_cast<float>(in[i]) * a + b;
    } else {
      const float* in = src.data<float>() + c * plane;
      for (int64_t i = 0; i < plane; ++i) o[i] = in[i] * a + b;
    }
  }
  return out;
}

absl::StatusOr<Tensor> crop_flip_image(const Tensor& image, int64_t out_h, int64_t out_w, int64_t padding,
                                       CropFlip params) {
  RETURN_IF_ERROR(check_image(image, "crop"));
  const int64_t h = image.size(1), w = image.size(2);
  if (padding < 0 || out_h < 1 || out_w < 1 || out_h > h + 2 * padding || out_w > w + 2 * padding) {
    return absl::InvalidArgumentError(absl::StrCat("crop: a ", out_h, "x", out_w, " crop with padding ", padding,
                                                   " does not fit ", image.describe()));
  }
  if (params.top < 0 || params.left < 0 || params.top + out_h > h + 2 * padding ||
      params.left + out_w > w + 2 * padding) {
    return absl::InvalidArgumentError(
        absl::StrCat("crop: offset (", params.top, ", ", params.left, ") is outside the padded ", image.describe()));
  }
  const std::vector<int64_t> maps[] = {
      {}, window_map(h, params.top - padding, out_h), window_map(w, params.left - padding, out_w, params.flip)};
  return remap(image, maps);
}

CropFlip draw_crop(RandomStream& rng, int64_t h, int64_t w, int64_t out_h, int64_t out_w, int64_t padding) {
  CropFlip params;
  params.top = rng.uniform_int(h + 2 * padding - out_h + 1);
  params.left = rng.uniform_int(w + 2 * padding - out_w + 1);
  return params;
}

absl::StatusOr<Tensor> pad_image(const Tensor& image, int64_t out_h, int64_t out_w) {
  RETURN_IF_ERROR(check_image(image, "pad_to"));
  const int64_t h = image.size(1), w = image.size(2);
  if (out_h < h || out_w < w) {
    return absl::InvalidArgumentError(
        absl::StrCat("pad_to: ", image.describe(), " is larger than ", out_h, "x", out_w));
  }
  const std::vector<int64_t> maps[] = {
      {}, window_map(h, -(out_h - h) / 2, out_h), window_map(w, -(out_w - w) / 2, out_w)};
  return remap(image, maps);
}

Transform normalize(std::vector<float> mean, std::vector<float> std, int field) {
  return on_field(field, "normalize", [mean = std::move(mean), std = std::move(std)](const Tensor& t, RandomStream&) {
    return normalize_image(t, mean, std);
  });
}

Transform random_crop(int64_t out_h, int64_t out_w, int64_t padding, int field) {
  return on_field(field, "random_crop", [=](const Tensor& t, RandomStream& rng) -> absl::StatusOr<Tensor> {
    RETURN_IF_ERROR(check_image(t, "random_crop"));
    if (out_h > t.size(1) + 2 * padding || out_w > t.size(2) + 2 * padding) {
      return absl::InvalidArgumentError(absl::StrCat("random_crop: a ", out_h, "x", out_w, " crop with padding ",
                                                     padding, " does not fit ", t.describe()));
    }
    return crop_flip_image(t, out_h, out_w, padding, draw_crop(rng, t.size(1), t.size(2), out_h, out_w, padding));
  });
}

Transform random_horizontal_flip(double probability, int field) {
  return on_field(field, "random_horizontal_flip", [=](const Tensor& t, RandomStream& rng) -> absl::StatusOr<Tensor> {
    RETURN_IF_ERROR(check_image(t, "random_horizontal_flip"));
    if (!rng.bernoulli(probability)) return t;
    return crop_flip_image(t, t.size(1), t.size(2), 0, CropFlip{0, 0, true});
  });
}

Transform pad_to(int64_t out_h, int64_t out_w, int field) {
  return on_field(field, "pad_to", [=](const Tensor& t, RandomStream&) { return pad_image(t, out_h, out_w); });
}

}  // namespace ts::data::transforms
