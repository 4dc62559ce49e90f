// Volume transforms against naive index arithmetic (a quarter turn applied
// k times, flips by their definition), and the guarantee that an image
// volume and its label volume get the same crop and the same flips.
#include "data/transforms/volume.h"

#include <set>
#include <utility>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/tensor/testing.h"

namespace ts::data::transforms {
namespace {

using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

// A [C, D, H, W] f32 volume whose voxel values are their flat indices.
Tensor numbered(int64_t c, int64_t d, int64_t h, int64_t w) {
  return arange(0, c * d * h * w, 1, {DType::kF32}).view({c, d, h, w});
}

// Reference: flips by definition, then `k` single quarter turns, each
// out[i][j] = in[j][W-1-i] (numpy.rot90 from H towards W).
std::vector<float> reference_flip_rotate(const std::vector<float>& v, int64_t c, int64_t d, int64_t h, int64_t w,
                                         FlipRot3d p) {
  std::vector<float> cur(v.size());
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t z = 0; z < d; ++z)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t sz = p.flip_d ? d - 1 - z : z, sy = p.flip_h ? h - 1 - y : y, sx = p.flip_w ? w - 1 - x : x;
          cur[((ci * d + z) * h + y) * w + x] = v[((ci * d + sz) * h + sy) * w + sx];
        }
  for (int turn = 0; turn < p.rot90; ++turn) {  // an h x w plane becomes w x h
    std::vector<float> next(cur.size());
    for (int64_t plane = 0; plane < c * d; ++plane)
      for (int64_t i = 0; i < w; ++i)
        for (int64_t j = 0; j < h; ++j) next[(plane * w + i) * h + j] = cur[(plane * h + j) * w + (w - 1 - i)];
    cur = std::move(next);
    std::swap(h, w);
  }
  return cur;
}

TEST(VolumeTest, QuarterTurnMatchesNumpyRot90) {
  // numpy.rot90([[1, 2], [3, 4]]) == [[2, 4], [1, 3]]
  Tensor v = from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  ASSERT_OK_AND_ASSIGN(Tensor out, flip_rotate_volume(v, {.rot90 = 1}));
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{2, 4, 1, 3}));
}

TEST(VolumeTest, EveryFlipAndRotationMatchesTheReference) {
  const int64_t c = 2, d = 3, h = 4, w = 4;
  Tensor v = numbered(c, d, h, w);
  const std::vector<float> values = to_vector<float>(v);
  for (int bits = 0; bits < 8; ++bits) {
    for (int k = 0; k < 4; ++k) {
      const FlipRot3d p{.flip_d = (bits & 1) != 0, .flip_h = (bits & 2) != 0, .flip_w = (bits & 4) != 0, .rot90 = k};
      ASSERT_OK_AND_ASSIGN(Tensor out, flip_rotate_volume(v, p));
      EXPECT_EQ(to_vector<float>(out), reference_flip_rotate(values, c, d, h, w, p))
          << "flips " << bits << " rot90 " << k;
    }
  }
}

TEST(VolumeTest, NonSquarePlanesFlipAndTurnHalfway) {
  Tensor v = numbered(1, 2, 3, 5);
  const std::vector<float> values = to_vector<float>(v);
  const FlipRot3d p{.flip_d = true, .flip_w = true, .rot90 = 2};
  ASSERT_OK_AND_ASSIGN(Tensor out, flip_rotate_volume(v, p));
  EXPECT_EQ(to_vector<float>(out), reference_flip_rotate(values, 1, 2, 3, 5, p));
  expect_error(flip_rotate_volume(v, {.rot90 = 1}).status(), absl::StatusCode::kInvalidArgument, {"H == W"});
  expect_error(flip_rotate_volume(v, {.rot90 = 4}).status(), absl::StatusCode::kInvalidArgument, {"0..3"});
}

TEST(VolumeTest, CropTakesTheWindow) {
  Tensor v = numbered(1, 4, 5, 6);
  ASSERT_OK_AND_ASSIGN(Tensor out, crop_volume(v, {1, 2, 3}, {2, 2, 2}));
  EXPECT_EQ(out.shape(), (Shape{1, 2, 2, 2}));
  // value = (z * 5 + y) * 6 + x at z in {1, 2}, y in {2, 3}, x in {3, 4}
  EXPECT_EQ(to_vector<float>(out), (std::vector<float>{45, 46, 51, 52, 75, 76, 81, 82}));
  expect_error(crop_volume(v, {3, 0, 0}, {2, 2, 2}).status(), absl::StatusCode::kInvalidArgument,
               {"crop_volume", "(3, 0, 0)", "f32[1, 4, 5, 6]"});
}

// An image volume (voxel = its flat index) and a u8 label volume holding
// the index mod 251, so any mismatch between their transforms shows.
Example paired(int64_t d, int64_t h, int64_t w) {
  std::vector<uint8_t> labels(d * h * w);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<uint8_t>(i % 251);
  return Example{{numbered(1, d, h, w), from_vector<uint8_t>(labels, {1, d, h, w})}};
}

void expect_still_paired(const Example& e) {
  const std::vector<float> image = to_vector<float>(e.fields[0]);
  const std::vector<uint8_t> label = to_vector<uint8_t>(e.fields[1]);
  ASSERT_EQ(image.size(), label.size());
  for (size_t i = 0; i < image.size(); ++i) {
    ASSERT_EQ(static_cast<int64_t>(image[i]) % 251, label[i]) << "voxel " << i;
  }
}

TEST(VolumeTransformTest, ImageAndLabelGetTheSameCropAndFlips) {
  const Transform pipeline = compose({random_crop_3d({6, 8, 8}), random_flip_rotate_3d()});
  std::set<std::vector<float>> distinct;
  for (uint64_t index = 0; index < 20; ++index) {
    RandomStream rng = RandomStream::for_sample(9, 1, index);
    ASSERT_OK_AND_ASSIGN(Example out, pipeline(paired(10, 12, 12), rng));
    EXPECT_EQ(out.fields[0].shape(), (Shape{1, 6, 8, 8}));
    EXPECT_EQ(out.fields[1].shape(), (Shape{1, 6, 8, 8}));
    expect_still_paired(out);
    distinct.insert(to_vector<float>(out.fields[0]));
  }
  EXPECT_GT(distinct.size(), 15u);  // the crops and flips vary per sample
}

TEST(VolumeTransformTest, RandomCropMatchesCropVolumeAtTheDrawnOffset) {
  Example e = paired(5, 6, 7);
  RandomStream rng(4, 4);
  ASSERT_OK_AND_ASSIGN(Example out, random_crop_3d({2, 3, 4})(e, rng));
  RandomStream replay(4, 4);
  Box3d at;
  at.d = replay.uniform_int(4);
  at.h = replay.uniform_int(4);
  at.w = replay.uniform_int(4);
  EXPECT_EQ(to_vector<float>(out.fields[0]), to_vector<float>(value_or_die(crop_volume(e.fields[0], at, {2, 3, 4}))));
}

TEST(VolumeTransformTest, FieldsMustShareTheirSpatialSize) {
  Example e = paired(4, 4, 4);
  e.fields[1] = zeros({1, 4, 4, 5}, {DType::kU8});
  RandomStream rng(1, 1);
  expect_error(random_flip_rotate_3d()(e, rng).status(), absl::StatusCode::kInvalidArgument,
               {"field 1", "u8[1, 4, 4, 5]", "f32[1, 4, 4, 4]"});
  expect_error(random_crop_3d({5, 2, 2})(paired(4, 4, 4), rng).status(), absl::StatusCode::kInvalidArgument,
               {"random_crop_3d", "5x2x2"});
}

}  // namespace
}  // namespace ts::data::transforms
