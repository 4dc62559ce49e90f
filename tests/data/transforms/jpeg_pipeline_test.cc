// The fused JPEG pipelines: at full scale bit for bit the unfused chain
// (decode, then the Transforms with the same stream); at a reduced DCT scale
// close to it; a PNG, whatever its name, decoded as Pillow decodes it and
// never at a reduced scale; corrupt files, and memory that is not there,
// are errors naming the file.
#include "data/transforms/jpeg_pipeline.h"

#include <zlib.h>

#include <cmath>
#include <string>
#include <vector>

#include "data/readers/jpeg.h"
#include "data/readers/jpeg_encode.h"
#include "data/transforms/image.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/address_space_limit.h"
#include "tests/data/readers/jpeg_fixture.h"
#include "tests/tensor/testing.h"

namespace ts::data::transforms {
namespace {

using ::ts::data::testing::jpeg_fixture_bytes;
using ::ts::testing::expect_error;
using ::ts::testing::value_or_die;

const char* const kFixtures[] = {"baseline_420.jpg",  "baseline_444.jpg", "progressive_420.jpg",
                                 "gray_baseline.jpg", "cmyk.jpg",         "scaled.jpg",
                                 "png_rgb.png",       "png_palette.png",  "png_gray_2bit_interlaced.png",
                                 "png_rgba16.png"};

// The unfused chain: decode_pipeline's u8 [3, H, W], then `transform`.
Tensor unfused(const std::string& jpeg, const Transform& transform, RandomStream& rng) {
  Tensor image = value_or_die(decode_pipeline()(jpeg, "f.jpg", rng));
  return value_or_die(transform(Example{{image}}, rng)).fields[0];
}

// train_pipeline(crop)'s steps as the Transforms one by one.
Transform unfused_training(const RandomResizedCropOptions& crop) {
  return compose({random_resized_crop(crop), random_horizontal_flip(0.5), normalize(kImageNetMean, kImageNetStd)});
}

// A smooth 480x640 photo-like picture as JPEG, large enough for 1/2 to 1/8
// scaled decodes.
std::string large_jpeg() {
  Tensor rgb = Tensor::allocate({480, 640, 3}, DType::kU8, Device::cpu());
  uint8_t* p = rgb.data<uint8_t>();
  for (int64_t y = 0; y < 480; ++y) {
    for (int64_t x = 0; x < 640; ++x, p += 3) {
      p[0] = static_cast<uint8_t>(128 + 100 * std::sin(x / 40.0) * std::cos(y / 60.0));
      p[1] = static_cast<uint8_t>(255 * x / 639);
      p[2] = static_cast<uint8_t>(255 * y / 479);
    }
  }
  return value_or_die(encode_jpeg(rgb));
}

// The same picture as an 8-bit RGB PNG (unfiltered rows, zlib-compressed).
std::string large_png() {
  const Tensor rgb = value_or_die(decode_jpeg(large_jpeg(), "large.jpg"));
  const int64_t height = rgb.size(0), width = rgb.size(1);
  std::string rows;
  for (int64_t y = 0; y < height; ++y) {
    rows += '\0';
    rows.append(reinterpret_cast<const char*>(rgb.data<uint8_t>()) + y * width * 3, width * 3);
  }
  std::string idat(compressBound(rows.size()), '\0');
  uLongf size = idat.size();
  EXPECT_EQ(
      compress(reinterpret_cast<Bytef*>(idat.data()), &size, reinterpret_cast<const Bytef*>(rows.data()), rows.size()),
      Z_OK);
  idat.resize(size);
  const auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  const auto chunk = [&](const std::string& type, const std::string& data) {
    const std::string body = type + data;
    return be32(data.size()) + body + be32(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size()));
  };
  return std::string("\x89PNG\r\n\x1a\n", 8) +
         chunk("IHDR", be32(width) + be32(height) + std::string("\x08\x02\0\0\0", 5)) + chunk("IDAT", idat) +
         chunk("IEND", "");
}

double mean_abs_difference(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = to_vector<float>(a), y = to_vector<float>(b);
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += std::abs(x[i] - y[i]);
  return sum / x.size();
}

TEST(JpegPipelineTest, DecodePipelineGivesChannelsFirst) {
  const std::string jpeg = jpeg_fixture_bytes("baseline_420.jpg");
  RandomStream rng(0, 0);
  ASSERT_OK_AND_ASSIGN(const Tensor image, decode_pipeline()(jpeg, "f.jpg", rng));
  EXPECT_EQ(image.shape(), Shape({3, 13, 17}));
  EXPECT_TRUE(image.is_contiguous());
  const Tensor hwc = value_or_die(decode_jpeg(jpeg, "f.jpg"));
  EXPECT_EQ(to_vector<uint8_t>(image), to_vector<uint8_t>(contiguous(hwc.permute({2, 0, 1}))));
}

TEST(JpegPipelineTest, TrainAtFullScaleEqualsTheTransformChain) {
  for (int64_t size : {24, 224}) {  // no crop of these images reaches 2 x 24: all at scale 1
    RandomResizedCropOptions crop;
    crop.size = size;
    const JpegPipeline fused = train_pipeline(crop);
    const Transform chain = unfused_training(crop);
    for (const char* name : kFixtures) {
      const std::string jpeg = jpeg_fixture_bytes(name);
      for (uint64_t sample = 0; sample < 8; ++sample) {  // both flips
        SCOPED_TRACE(::testing::Message() << name << " size " << size << " sample " << sample);
        RandomStream a = RandomStream::for_sample(1, 2, sample), b = a;
        ASSERT_OK_AND_ASSIGN(const Tensor out, fused(jpeg, name, a));
        EXPECT_EQ(out.shape(), Shape({3, size, size}));
        EXPECT_EQ(out.dtype(), DType::kF32);
        EXPECT_EQ(to_vector<float>(out), to_vector<float>(unfused(jpeg, chain, b)));
        EXPECT_EQ(a.next_u64(), b.next_u64());  // the stream continues where the chain's would
      }
    }
  }
}

// Evaluation decodes at full scale also where a reduced one would do (480
// rows to 64), so it is the transform chain's, bit for bit.
TEST(JpegPipelineTest, EvalEqualsTheTransformChain) {
  const JpegPipeline fused = eval_pipeline(24, 20);
  const Transform chain = compose({resize_center_crop(24, 20), normalize(kImageNetMean, kImageNetStd)});
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string jpeg = jpeg_fixture_bytes(name);
    RandomStream rng(0, 0);
    ASSERT_OK_AND_ASSIGN(const Tensor out, fused(jpeg, name, rng));
    EXPECT_EQ(out.shape(), Shape({3, 20, 20}));
    EXPECT_EQ(to_vector<float>(out), to_vector<float>(unfused(jpeg, chain, rng)));
  }
  const std::string jpeg = large_jpeg();
  RandomStream rng(0, 0);
  ASSERT_OK_AND_ASSIGN(const Tensor eval, eval_pipeline(64, 56)(jpeg, "big.jpg", rng));
  EXPECT_EQ(to_vector<float>(eval),
            to_vector<float>(
                unfused(jpeg, compose({resize_center_crop(64, 56), normalize(kImageNetMean, kImageNetStd)}), rng)));
}

TEST(JpegPipelineTest, ReducedScaleTrainingDecodesStayCloseToFullScale) {
  const std::string jpeg = large_jpeg();
  // Training at 32x32: most crops of a 480x640 image decode at 1/2 to 1/8.
  RandomResizedCropOptions crop;
  crop.size = 32;
  const Transform chain = unfused_training(crop);
  for (uint64_t sample = 0; sample < 20; ++sample) {
    SCOPED_TRACE(sample);
    RandomStream a = RandomStream::for_sample(0, 0, sample), b = a;
    ASSERT_OK_AND_ASSIGN(const Tensor out, train_pipeline(crop)(jpeg, "big.jpg", a));
    EXPECT_EQ(out.shape(), Shape({3, 32, 32}));
    EXPECT_LT(mean_abs_difference(out, unfused(jpeg, chain, b)), 0.1);
  }
}

// torchvision's loader opens a file by its content: so do the pipelines.
TEST(JpegPipelineTest, APngNamedJpegDecodesAsPillowDecodesIt) {
  RandomStream rng(0, 0);
  ASSERT_OK_AND_ASSIGN(const Tensor image, decode_pipeline()(jpeg_fixture_bytes("png_rgba.png"), "n0/x.JPEG", rng));
  EXPECT_EQ(to_vector<uint8_t>(image),
            to_vector<uint8_t>(contiguous(::ts::data::testing::read_ppm_fixture("png_rgba.ppm").permute({2, 0, 1}))));
}

// A JPEG of this size would decode at 1/2 to 1/8 for these crops; a PNG has
// no such decode and stays the transform chain's, bit for bit.
TEST(JpegPipelineTest, APngTrainsAtFullScale) {
  const std::string png = large_png();
  RandomResizedCropOptions crop;
  crop.size = 32;
  const Transform chain = unfused_training(crop);
  for (uint64_t sample = 0; sample < 10; ++sample) {
    SCOPED_TRACE(sample);
    RandomStream a = RandomStream::for_sample(0, 0, sample), b = a;
    ASSERT_OK_AND_ASSIGN(const Tensor out, train_pipeline(crop)(png, "big.png", a));
    EXPECT_EQ(to_vector<float>(out), to_vector<float>(unfused(png, chain, b)));
  }
}

// A header within the pixel limit whose image the memory cannot hold: the
// pipelines' own buffer fails, named.
TEST(JpegPipelineTest, OutOfMemoryIsAnErrorNamingTheFile) {
  if (!::ts::data::testing::AddressSpaceLimit::usable()) {
    GTEST_SKIP() << "the address-space limit does not work under sanitizers";
  }
  std::string huge = jpeg_fixture_bytes("baseline_444.jpg");
  const size_t sof = huge.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  huge.replace(sof + 5, 4, std::string("\x40\x00\x40\x00", 4));  // 16384 x 16384: 768 MiB of RGB
  RandomStream rng(0, 0);
  ::ts::data::testing::AddressSpaceLimit limit(int64_t{256} << 20);
  for (const JpegPipeline& pipeline : {decode_pipeline(), eval_pipeline()}) {
    expect_error(pipeline(huge, "dir/huge.JPEG", rng).status(), absl::StatusCode::kResourceExhausted,
                 {"dir/huge.JPEG", "16384x16384", "out of memory"});
  }
}

TEST(JpegPipelineTest, CorruptFilesAreErrorsNamingThem) {
  for (const std::string& cut : {jpeg_fixture_bytes("progressive_420.jpg").substr(0, 400),
                                 jpeg_fixture_bytes("png_rgb.png").substr(0, 400), std::string("GIF89a...")}) {
    for (const JpegPipeline& pipeline : {decode_pipeline(), train_pipeline(), eval_pipeline()}) {
      RandomStream rng(0, 0);
      expect_error(pipeline(cut, "dir/cut.JPEG", rng).status(), absl::StatusCode::kDataLoss, {"dir/cut.JPEG"});
    }
  }
  RandomStream rng(0, 0);
  expect_error(train_pipeline({}, 0.5, {0.5f, 0.5f}, {1, 1})(jpeg_fixture_bytes("cmyk.jpg"), "f.jpg", rng).status(),
               absl::StatusCode::kInvalidArgument, {"2 means"});
  expect_error(eval_pipeline(200, 224)(jpeg_fixture_bytes("cmyk.jpg"), "f.jpg", rng).status(),
               absl::StatusCode::kInvalidArgument, {"224", "200"});
}

}  // namespace
}  // namespace ts::data::transforms
