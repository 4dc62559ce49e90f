// Image transforms against hand-computed results: normalization, crop with
// padding, flips, centered padding; the Transform wrappers draw from the
// sample's stream and leave other fields alone.
#include "data/transforms/image.h"

#include <set>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data::transforms {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

// A 1 x 3 x 3 u8 image holding 1..9 row by row.
Tensor nine() { return from_vector<uint8_t>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3}); }

std::vector<uint8_t> bytes(const Tensor& t) { return to_vector<uint8_t>(t); }

TEST(NormalizeTest, ScalesBytesAndNormalizesPerChannel) {
  Tensor image = from_vector<uint8_t>({0, 255, 51, 102}, {2, 1, 2});
  ASSERT_OK_AND_ASSIGN(Tensor out, normalize_image(image, {0.5f, 0.2f}, {0.25f, 0.1f}));
  EXPECT_EQ(out.dtype(), DType::kF32);
  EXPECT_EQ(out.shape(), image.shape());
  const std::vector<float> v = to_vector<float>(out);
  // (0 - 0.5) / 0.25, (1 - 0.5) / 0.25, (0.2 - 0.2) / 0.1, (0.4 - 0.2) / 0.1
  const std::vector<double> expected = {-2.0, 2.0, 0.0, 2.0};
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], expected[i], 1e-5) << i;
}

TEST(NormalizeTest, FloatInputIsNotRescaled) {
  Tensor image = from_vector<float>({1.0f, 3.0f}, {1, 2});
  ASSERT_OK_AND_ASSIGN(Tensor out, normalize_image(image, {1.0f}, {2.0f}));
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{0.0f, 1.0f}));
}

TEST(NormalizeTest, RejectsMismatchedStatistics) {
  expect_error(normalize_image(nine(), {0.5f, 0.5f}, {1.0f, 1.0f}).status(), absl::StatusCode::kInvalidArgument,
               {"normalize", "2 means", "1 channels"});
  expect_error(normalize_image(nine(), {0.5f}, {0.0f}).status(), absl::StatusCode::kInvalidArgument,
               {"std 0", "not positive"});
  expect_error(normalize_image(full({1, 2}, 1, {DType::kI32}), {0.f}, {1.f}).status(),
               absl::StatusCode::kInvalidArgument, {"u8 or floating"});
}

TEST(CropFlipTest, CropsThePaddedImage) {
  ASSERT_OK_AND_ASSIGN(Tensor top_left, crop_flip_image(nine(), 3, 3, 1, {0, 0, false}));
  EXPECT_EQ(bytes(top_left), (std::vector<uint8_t>{0, 0, 0, 0, 1, 2, 0, 4, 5}));
  ASSERT_OK_AND_ASSIGN(Tensor bottom_right, crop_flip_image(nine(), 2, 2, 1, {3, 3, false}));
  EXPECT_EQ(bytes(bottom_right), (std::vector<uint8_t>{9, 0, 0, 0}));
  ASSERT_OK_AND_ASSIGN(Tensor center, crop_flip_image(nine(), 3, 3, 1, {1, 1, false}));
  EXPECT_EQ(bytes(center), bytes(nine()));
}

TEST(CropFlipTest, FlipsAfterCropping) {
  ASSERT_OK_AND_ASSIGN(Tensor flipped, crop_flip_image(nine(), 3, 3, 0, {0, 0, true}));
  EXPECT_EQ(bytes(flipped), (std::vector<uint8_t>{3, 2, 1, 6, 5, 4, 9, 8, 7}));
  ASSERT_OK_AND_ASSIGN(Tensor both, crop_flip_image(nine(), 3, 3, 1, {0, 0, true}));
  EXPECT_EQ(bytes(both), (std::vector<uint8_t>{0, 0, 0, 2, 1, 0, 5, 4, 0}));
}

TEST(CropFlipTest, WorksOnEveryChannelAndDtype) {
  Tensor image = from_vector<int64_t>({1, 2, 3, 4, 10, 20, 30, 40}, {2, 2, 2});
  ASSERT_OK_AND_ASSIGN(Tensor out, crop_flip_image(image, 2, 2, 0, {0, 0, true}));
  EXPECT_EQ(to_vector<int64_t>(out), (std::vector<int64_t>{2, 1, 4, 3, 20, 10, 40, 30}));
}

TEST(CropFlipTest, RejectsCropsThatDoNotFit) {
  expect_error(crop_flip_image(nine(), 6, 3, 1, {0, 0, false}).status(), absl::StatusCode::kInvalidArgument,
               {"6x3", "padding 1", "u8[1, 3, 3]"});
  expect_error(crop_flip_image(nine(), 3, 3, 1, {1, 3, false}).status(), absl::StatusCode::kInvalidArgument,
               {"offset (1, 3)"});
  expect_error(crop_flip_image(zeros({3, 3}), 2, 2, 0, {}).status(), absl::StatusCode::kInvalidArgument,
               {"[C, H, W]", "f32[3, 3]"});
}

TEST(PadTest, CentersTheImage) {
  ASSERT_OK_AND_ASSIGN(Tensor out, pad_image(nine(), 5, 6));
  EXPECT_EQ(out.shape(), (Shape{1, 5, 6}));
  // One row above, one below; one column left, two right ((6 - 3) / 2 = 1).
  EXPECT_EQ(bytes(out), (std::vector<uint8_t>{0, 0, 0, 0, 0, 0,  //
                                              0, 1, 2, 3, 0, 0,  //
                                              0, 4, 5, 6, 0, 0,  //
                                              0, 7, 8, 9, 0, 0,  //
                                              0, 0, 0, 0, 0, 0}));
  Tensor mnist = full({1, 28, 28}, 7, {DType::kU8});
  ASSERT_OK_AND_ASSIGN(Tensor padded, pad_image(mnist, 32, 32));
  const std::vector<uint8_t> v = bytes(padded);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[2 * 32 + 2], 7);    // first pixel of the image
  EXPECT_EQ(v[29 * 32 + 29], 7);  // last pixel
  EXPECT_EQ(v[29 * 32 + 30], 0);
  expect_error(pad_image(mnist, 20, 32).status(), absl::StatusCode::kInvalidArgument, {"pad_to", "larger"});
}

Example image_example(Tensor image) { return Example{{std::move(image), full({}, 3, {DType::kI64})}}; }

TEST(ImageTransformTest, RandomCropDrawsItsOffsetsFromTheSampleStream) {
  const Tensor image = arange(0, 2 * 8 * 8, 1, {DType::kF32}).view({2, 8, 8});
  std::set<std::pair<int64_t, int64_t>> offsets;
  for (uint64_t index = 0; index < 50; ++index) {
    RandomStream rng = RandomStream::for_sample(1, 0, index);
    ASSERT_OK_AND_ASSIGN(Example out, random_crop(8, 8, 2)(image_example(image), rng));
    RandomStream replay = RandomStream::for_sample(1, 0, index);
    const CropFlip params = draw_crop(replay, 8, 8, 8, 8, 2);
    offsets.insert({params.top, params.left});
    EXPECT_EQ(to_vector<float>(out.fields[0]), to_vector<float>(value_or_die(crop_flip_image(image, 8, 8, 2, params))));
    EXPECT_EQ(item<int64_t>(out.fields[1]), 3);  // the label passes through
  }
  EXPECT_GT(offsets.size(), 15u);  // 25 possible offsets, drawn uniformly
}

TEST(ImageTransformTest, HorizontalFlipFollowsItsProbability) {
  RandomStream rng(1, 2);
  ASSERT_OK_AND_ASSIGN(Example always, random_horizontal_flip(1.0)(image_example(nine()), rng));
  EXPECT_EQ(bytes(always.fields[0]), (std::vector<uint8_t>{3, 2, 1, 6, 5, 4, 9, 8, 7}));
  ASSERT_OK_AND_ASSIGN(Example never, random_horizontal_flip(0.0)(image_example(nine()), rng));
  EXPECT_EQ(bytes(never.fields[0]), bytes(nine()));
  int flips = 0;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_OK_AND_ASSIGN(Example e, random_horizontal_flip(0.5)(image_example(nine()), rng));
    flips += bytes(e.fields[0])[0] == 3;
  }
  EXPECT_NEAR(flips, 500, 80);
  // An empty image fails whatever the coin says (it failed only when it
  // said flip), and so do padding and cropping it.
  const Example empty_image{{zeros({1, 0, 3}, {DType::kU8})}};
  for (const double p : {0.0, 1.0}) {
    ::ts::testing::expect_error(random_horizontal_flip(p)(empty_image, rng).status(),
                                absl::StatusCode::kInvalidArgument,
                                {"random_horizontal_flip", "H, W >= 1", "[1, 0, 3]"});
  }
  ::ts::testing::expect_error(pad_to(4, 4)(empty_image, rng).status(), absl::StatusCode::kInvalidArgument,
                              {"H, W >= 1"});
}

TEST(ImageTransformTest, ComposedPipelineAndFieldErrors) {
  const Transform pipeline =
      compose({pad_to(4, 4), random_crop(4, 4, 1), random_horizontal_flip(), normalize({0.5f}, {0.5f})});
  RandomStream rng(3, 4);
  ASSERT_OK_AND_ASSIGN(Example out, pipeline(image_example(nine()), rng));
  EXPECT_EQ(out.fields[0].shape(), (Shape{1, 4, 4}));
  EXPECT_EQ(out.fields[0].dtype(), DType::kF32);
  expect_error(normalize({0.5f}, {0.5f}, 2)(image_example(nine()), rng).status(), absl::StatusCode::kInvalidArgument,
               {"normalize", "field 2 does not exist"});
  expect_error(random_crop(9, 9, 0)(image_example(nine()), rng).status(), absl::StatusCode::kInvalidArgument,
               {"random_crop", "9x9"});
}

}  // namespace
}  // namespace ts::data::transforms
