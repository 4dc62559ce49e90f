// torchvision's RandomResizedCrop parameter sampling (boxes in range, the
// distribution's bounds, determinism per stream, the fallback), its Resize
// and CenterCrop arithmetic, and their Transforms.
#include "data/transforms/resized_crop.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/jpeg_fixture.h"
#include "tests/tensor/testing.h"

namespace ts::data::transforms {
namespace {

using ::ts::data::testing::read_ppm_fixture;

bool same_box(const Box& a, const Box& b) {
  return a.top == b.top && a.left == b.left && a.height == b.height && a.width == b.width;
}

TEST(RandomResizedCropTest, BoxesFitAndFollowTheScaleAndRatioRanges) {
  const RandomResizedCropOptions options;
  double area_sum = 0;
  const int draws = 4000;
  for (int i = 0; i < draws; ++i) {
    RandomStream rng(7, i);
    const Box box = draw_resized_crop(rng, 375, 500, options);
    ASSERT_GE(box.top, 0);
    ASSERT_GE(box.left, 0);
    ASSERT_GE(box.height, 1);
    ASSERT_GE(box.width, 1);
    ASSERT_LE(box.top + box.height, 375);
    ASSERT_LE(box.left + box.width, 500);
    const double fraction = static_cast<double>(box.height) * box.width / (375.0 * 500.0);
    // Rounding each side to an integer moves the area and ratio a little.
    EXPECT_GE(fraction, 0.08 * 0.95);
    EXPECT_LE(fraction, 1.0);
    const double ratio = static_cast<double>(box.width) / box.height;
    EXPECT_GE(ratio, 0.75 * 0.95);
    EXPECT_LE(ratio, 4.0 / 3.0 * 1.05);
    area_sum += fraction;
  }
  // Uniform in [0.08, 1] has mean 0.54, but large boxes of a ratio below
  // 4/3 do not fit a 500x375 image and are redrawn: torchvision's
  // get_params gives a mean of 0.433 here (2e5 draws of it in Python).
  EXPECT_NEAR(area_sum / draws, 0.433, 0.015);
}

TEST(RandomResizedCropTest, TheSameStreamGivesTheSameBox) {
  int differing = 0;
  for (int i = 0; i < 100; ++i) {
    RandomStream a = RandomStream::for_sample(3, 1, i), b = RandomStream::for_sample(3, 1, i);
    RandomStream other = RandomStream::for_sample(4, 1, i);
    const Box box = draw_resized_crop(a, 300, 400, {});
    EXPECT_TRUE(same_box(box, draw_resized_crop(b, 300, 400, {})));
    differing += !same_box(box, draw_resized_crop(other, 300, 400, {}));
  }
  EXPECT_GT(differing, 90);
}

TEST(RandomResizedCropTest, FallsBackToTheCenterClampedToTheRatioRange) {
  RandomStream rng(1, 2);
  // No box of 8% to 100% of the area with a ratio in [3/4, 4/3] fits a
  // 10-pixel-high strip: the center box of ratio 4/3 is used.
  EXPECT_TRUE(same_box(draw_resized_crop(rng, 10, 1000, {}), Box{0, 493, 10, 13}));
  EXPECT_TRUE(same_box(draw_resized_crop(rng, 1000, 10, {}), Box{493, 0, 13, 10}));
  // Within the ratio range the whole image is the fallback.
  RandomResizedCropOptions square;
  square.min_scale = square.max_scale = 1.0;
  square.min_ratio = square.max_ratio = 1.0;
  EXPECT_TRUE(same_box(draw_resized_crop(rng, 50, 50, square), Box{0, 0, 50, 50}));
  // 2000 pixels as a square would be 45x45, too high for 40 rows.
  EXPECT_TRUE(same_box(draw_resized_crop(rng, 40, 50, square), Box{0, 5, 40, 40}));
}

TEST(ResizeCenterCropTest, FollowsTorchvisionArithmetic) {
  EXPECT_EQ(shorter_side_size(375, 500, 256).height, 256);
  EXPECT_EQ(shorter_side_size(375, 500, 256).width, 341);  // int(256 * 500 / 375) = int(341.33)
  EXPECT_EQ(shorter_side_size(500, 375, 256).height, 341);
  EXPECT_EQ(shorter_side_size(500, 375, 256).width, 256);
  EXPECT_EQ(shorter_side_size(300, 300, 256).width, 256);
  // Offsets round half to even: 58.5 -> 58, 59.5 -> 60.
  EXPECT_TRUE(same_box(center_crop_box(341, 256, 224), Box{58, 16, 224, 224}));
  EXPECT_TRUE(same_box(center_crop_box(343, 256, 224), Box{60, 16, 224, 224}));
  const ResizeSpec spec = resize_center_crop_spec(375, 500, 256, 224);
  EXPECT_TRUE(same_box(spec.crop, Box{0, 0, 375, 500}));
  EXPECT_EQ(spec.out_height, 256);
  EXPECT_EQ(spec.out_width, 341);
  EXPECT_TRUE(same_box(spec.keep, Box{16, 58, 224, 224}));
}

TEST(ResizedCropTransformsTest, CropResizeAndCenterCropTheImage) {
  const Tensor image = contiguous(read_ppm_fixture("baseline_444.ppm").permute({2, 0, 1}));  // [3, 13, 17]
  RandomResizedCropOptions options;
  options.size = 9;
  RandomStream rng(5, 6), replay(5, 6);
  ASSERT_OK_AND_ASSIGN(Example out, random_resized_crop(options)(Example{{image}}, rng));
  const Box box = draw_resized_crop(replay, 13, 17, options);
  ASSERT_OK_AND_ASSIGN(const Tensor expected, resample_image(image, ResizeSpec{box, 9, 9, Box{0, 0, 9, 9}}));
  EXPECT_EQ(out.fields[0].shape(), Shape({3, 9, 9}));
  EXPECT_EQ(to_vector<uint8_t>(out.fields[0]), to_vector<uint8_t>(expected));

  ASSERT_OK_AND_ASSIGN(out, resize_center_crop(10, 8)(Example{{image}}, rng));
  ASSERT_OK_AND_ASSIGN(const Tensor resized, resize_image(image, 10, 13));  // int(10 * 17 / 13) = 13
  EXPECT_EQ(to_vector<uint8_t>(out.fields[0]),
            to_vector<uint8_t>(contiguous(resized.narrow(1, 1, 8).narrow(2, 2, 8))));  // round(2.5) = 2
  ::ts::testing::expect_error(resize_center_crop(8, 10)(Example{{image}}, rng).status(),
                              absl::StatusCode::kInvalidArgument, {"resize_center_crop", "10x10"});
}

// An empty image and unordered or non-positive ranges are errors naming
// them, where they had divided by zero or taken the log of 0.
TEST(ResizedCropTransformsTest, EmptyImagesAndBadRangesAreNamed) {
  RandomStream rng(5, 6);
  for (const Shape& shape : {Shape{3, 0, 5}, Shape{3, 5, 0}}) {
    const Tensor empty_image = zeros(shape, {DType::kU8});
    ::ts::testing::expect_error(random_resized_crop({})(Example{{empty_image}}, rng).status(),
                                absl::StatusCode::kInvalidArgument, {"random_resized_crop", "H, W >= 1"});
    ::ts::testing::expect_error(resize_center_crop(8, 8)(Example{{empty_image}}, rng).status(),
                                absl::StatusCode::kInvalidArgument, {"resize_center_crop"});
  }
  const Tensor image = zeros({3, 8, 8}, {DType::kU8});
  RandomResizedCropOptions reversed;
  reversed.min_scale = 0.9;
  reversed.max_scale = 0.1;
  RandomResizedCropOptions zero_ratio;
  zero_ratio.min_ratio = 0;
  for (const RandomResizedCropOptions& bad : {reversed, zero_ratio}) {
    ::ts::testing::expect_error(random_resized_crop(bad)(Example{{image}}, rng).status(),
                                absl::StatusCode::kInvalidArgument,
                                {"random_resized_crop", "must be positive and in order"});
  }
}

}  // namespace
}  // namespace ts::data::transforms
