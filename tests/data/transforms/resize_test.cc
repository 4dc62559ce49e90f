// The bilinear resampler against Pillow 13's Image.resize(BILINEAR) (the
// fixture of tools/golden/jpeg_pillow.py): equal pixel for pixel when
// downscaling (antialiased), upscaling and resizing one axis, in either of
// Pillow 13's pass orders (columns first when the height shrinks by more
// than twice the width); a crop and a kept window equal resizing the cropped
// copy and cropping the result, in either order and any memory layout.
#include "data/transforms/resize.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "data/readers/jpeg.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/jpeg_fixture.h"
#include "tests/tensor/testing.h"

namespace ts::data::transforms {
namespace {

using ::ts::data::testing::expect_same_pixels;
using ::ts::data::testing::jpeg_fixture_bytes;
using ::ts::data::testing::read_ppm_fixture;
using ::ts::testing::expect_error;

// u8 [H, W, 3] -> the [3, H, W] view of it, as the pipelines pass decodes.
Tensor chw(const Tensor& hwc) { return hwc.permute({2, 0, 1}); }

TEST(ResizeTest, EqualsPillowBilinear) {
  const Tensor decoded = read_ppm_fixture("baseline_420.ppm");
  const Tensor scaled = ::ts::testing::value_or_die(decode_jpeg(jpeg_fixture_bytes("scaled.jpg"), "scaled.jpg"));
  const std::pair<const char*, const Tensor*> sources[] = {{"baseline_420", &decoded}, {"scaled", &scaled}};
  // (width, height) as Pillow's sizes are given.
  const std::vector<std::pair<int64_t, int64_t>> sizes[] = {{{7, 5}, {25, 17}, {17, 6}, {8, 13}, {25, 5}},
                                                            {{7, 5}, {20, 30}}};
  for (int s = 0; s < 2; ++s) {
    for (const auto& [w, h] : sizes[s]) {
      SCOPED_TRACE(absl::StrCat(sources[s].first, " to ", w, "x", h));
      ASSERT_OK_AND_ASSIGN(const Tensor out, resize_image(chw(*sources[s].second), h, w));
      expect_same_pixels(
          out, contiguous(chw(read_ppm_fixture(absl::StrCat("resize.", sources[s].first, ".", w, "x", h, ".ppm")))));
    }
  }
}

// A tall crop made square, as RandomResizedCrop does: 30 rows to 24 and 20
// columns to 24 is a vertical pass first in Pillow 13 (Pillow 12 and before
// went row by row first, a level off in many pixels).
TEST(ResizeTest, TallCropEqualsPillow13CropThenResize) {
  const Tensor image = chw(::ts::testing::value_or_die(decode_jpeg(jpeg_fixture_bytes("scaled.jpg"), "scaled.jpg")));
  ASSERT_OK_AND_ASSIGN(const Tensor out,
                       resample_image(image, ResizeSpec{Box{3, 8, 30, 20}, 24, 24, Box{0, 0, 24, 24}}));
  expect_same_pixels(out, contiguous(chw(read_ppm_fixture("resize.scaled.crop8_3_20x30.24x24.ppm"))));
}

// Columns first, the kept window and every layout's loop (interleaved RGB,
// planes, interleaved 4 channels, a strided view) give the whole resize's
// pixels.
TEST(ResizeTest, VerticalFirstWindowsAndLayoutsEqualTheWholeResize) {
  const Tensor hwc = ::ts::testing::value_or_die(decode_jpeg(jpeg_fixture_bytes("scaled.jpg"), "scaled.jpg"));
  const Box crop{2, 5, 33, 21};  // 33 rows to 12, 21 columns to 19
  const Tensor cropped = contiguous(chw(hwc).narrow(1, crop.top, crop.height).narrow(2, crop.left, crop.width));
  ASSERT_OK_AND_ASSIGN(const Tensor full, resize_image(cropped, 12, 19));
  const Box keep{3, 4, 8, 11};
  const Tensor kept = contiguous(full.narrow(1, keep.top, keep.height).narrow(2, keep.left, keep.width));
  const Tensor hwc4 = contiguous(cat({hwc, hwc.narrow(2, 0, 1)}, 2));
  struct Layout {
    const char* name;
    Tensor image;
    int64_t first_channel;  // of the RGB resize that its first channels equal
  };
  const Layout layouts[] = {{"interleaved RGB", chw(hwc), 0},
                            {"planes", contiguous(chw(hwc)), 0},
                            {"interleaved RGBA", chw(hwc4), 0},
                            {"strided G and B", chw(hwc).narrow(0, 1, 2), 1}};
  for (const Layout& layout : layouts) {
    SCOPED_TRACE(layout.name);
    ASSERT_OK_AND_ASSIGN(const Tensor out, resample_image(layout.image, ResizeSpec{crop, 12, 19, keep}));
    const int64_t channels = std::min<int64_t>(out.size(0), 3);
    expect_same_pixels(contiguous(out.narrow(0, 0, channels)),
                       contiguous(kept.narrow(0, layout.first_channel, channels)));
  }
}

TEST(ResizeTest, SameSizeIsTheIdentity) {
  const Tensor image = chw(read_ppm_fixture("baseline_444.ppm"));
  ASSERT_OK_AND_ASSIGN(const Tensor out, resize_image(image, 13, 17));
  expect_same_pixels(out, contiguous(image));
}

TEST(ResizeTest, CropAndKeptWindowEqualCroppingCopies) {
  const Tensor image = chw(::ts::testing::value_or_die(decode_jpeg(jpeg_fixture_bytes("scaled.jpg"), "scaled.jpg")));
  const Box crop{5, 7, 30, 21};
  ResizeSpec spec{crop, 11, 9, Box{2, 3, 8, 5}};
  ASSERT_OK_AND_ASSIGN(const Tensor fused, resample_image(image, spec));
  const Tensor cropped = contiguous(image.narrow(1, crop.top, crop.height).narrow(2, crop.left, crop.width));
  ASSERT_OK_AND_ASSIGN(const Tensor full, resize_image(cropped, 11, 9));
  expect_same_pixels(fused, contiguous(full.narrow(1, 2, 8).narrow(2, 3, 5)));
  // Upscaling too.
  spec = ResizeSpec{crop, 61, 40, Box{10, 0, 50, 40}};
  ASSERT_OK_AND_ASSIGN(const Tensor up, resample_image(image, spec));
  ASSERT_OK_AND_ASSIGN(const Tensor up_full, resize_image(cropped, 61, 40));
  expect_same_pixels(up, contiguous(up_full.narrow(1, 10, 50)));
}

TEST(ResizeTest, ChannelsAreIndependent) {
  const Tensor image = chw(read_ppm_fixture("progressive_420.ppm"));
  ASSERT_OK_AND_ASSIGN(const Tensor rgb, resize_image(image, 6, 9));
  for (int64_t c = 0; c < 3; ++c) {
    ASSERT_OK_AND_ASSIGN(const Tensor one, resize_image(contiguous(image.narrow(0, c, 1)), 6, 9));
    expect_same_pixels(one, contiguous(rgb.narrow(0, c, 1)));
  }
  // Four channels (RGBA-like) through the generic path.
  const Tensor four = contiguous(cat({image, image.narrow(0, 1, 1)}, 0));
  ASSERT_OK_AND_ASSIGN(const Tensor out, resize_image(four, 6, 9));
  expect_same_pixels(contiguous(out.narrow(0, 0, 3)), rgb);
}

TEST(ResizeTest, RejectsWhatDoesNotFit) {
  const Tensor image = chw(read_ppm_fixture("baseline_420.ppm"));
  expect_error(resize_image(image, 0, 4).status(), absl::StatusCode::kInvalidArgument, {"0x4"});
  expect_error(resample_image(image, ResizeSpec{Box{0, 0, 14, 17}, 5, 5, Box{0, 0, 5, 5}}).status(),
               absl::StatusCode::kInvalidArgument, {"crop", "14x17", "13x17"});
  expect_error(resample_image(image, ResizeSpec{Box{0, 0, 13, 17}, 5, 5, Box{1, 1, 5, 5}}).status(),
               absl::StatusCode::kInvalidArgument, {"kept part", "5x5"});
  expect_error(resize_image(to(image, DType::kF32), 4, 4).status(), absl::StatusCode::kInvalidArgument, {"u8", "f32"});
}

}  // namespace
}  // namespace ts::data::transforms
