// PNG decoding against Pillow 13 (the fixture of tools/golden/jpeg_pillow.py):
// every color type and bit depth, interlaced or not, decodes to Pillow's
// convert("RGB") pixels (alpha dropped, 16 bits cut to 8 as Pillow does, a
// short palette's missing entries black). Truncated, corrupt and oversized
// files, and memory that is not there, are errors naming the file.
#include "data/readers/png.h"

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/address_space_limit.h"
#include "tests/data/readers/jpeg_fixture.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::AddressSpaceLimit;
using ::ts::data::testing::expect_every_truncation_fails;
using ::ts::data::testing::expect_same_pixels;
using ::ts::data::testing::jpeg_fixture_bytes;
using ::ts::data::testing::read_ppm_fixture;
using ::ts::testing::expect_error;

// `png` with its IHDR saying width x height (and its checksum made right,
// so that libpng reads on).
std::string with_size(std::string png, uint32_t width, uint32_t height) {
  // Signature (8), IHDR's length (4) and type (4), width (4), height (4).
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<char>(width >> (24 - 8 * i));
    png[20 + i] = static_cast<char>(height >> (24 - 8 * i));
  }
  const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 4 + 13);
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<char>(crc >> (24 - 8 * i));
  return png;
}

class PngPillowTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PngPillowTest, DecodesAsPillow) {
  const std::string name = GetParam();
  const std::string bytes = jpeg_fixture_bytes(name + ".png");
  const Tensor expected = read_ppm_fixture(name + ".ppm");
  ASSERT_OK_AND_ASSIGN(const Tensor rgb, decode_png(bytes, name));
  EXPECT_EQ(rgb.dtype(), DType::kU8);
  expect_same_pixels(rgb, expected);
  ASSERT_OK_AND_ASSIGN(const PngHeader header, read_png_header(bytes, name));
  EXPECT_EQ(header.height, 13);
  EXPECT_EQ(header.width, 17);
}

INSTANTIATE_TEST_SUITE_P(Fixture, PngPillowTest,
                         ::testing::Values("png_rgb", "png_rgba", "png_gray", "png_gray_alpha", "png_palette",
                                           "png_palette_4bit", "png_gray_1bit", "png_gray_2bit_interlaced",
                                           "png_gray_4bit", "png_palette_short", "png_rgb16", "png_rgba16",
                                           "png_gray16", "png_gray_alpha16", "png_rgb_interlaced"));

TEST(PngTest, TellsAPngByItsSignature) {
  const std::string png = jpeg_fixture_bytes("png_rgb.png");
  EXPECT_TRUE(is_png(png));
  EXPECT_FALSE(is_png(png.substr(0, 7)));
  EXPECT_FALSE(is_png(jpeg_fixture_bytes("baseline_420.jpg")));
  expect_error(decode_png(jpeg_fixture_bytes("baseline_420.jpg"), "a.png").status(), absl::StatusCode::kDataLoss,
               {"a.png", "not a PNG"});
}

TEST(PngTest, DecodesIntoTheCallersBufferOnlyOfTheRightShape) {
  const std::string png = jpeg_fixture_bytes("png_palette.png");
  const Tensor out = Tensor::allocate({13, 17, 3}, DType::kU8, Device::cpu());
  ASSERT_OK(decode_png_into(png, "p.png", kMaxPngPixels, out));
  expect_same_pixels(out, read_ppm_fixture("png_palette.ppm"));
  expect_error(decode_png_into(png, "p.png", kMaxPngPixels, Tensor::allocate({17, 13, 3}, DType::kU8, Device::cpu())),
               absl::StatusCode::kInvalidArgument, {"p.png", "[13, 17, 3]"});
}

TEST(PngTest, EveryTruncationIsANamedError) {
  expect_every_truncation_fails(
      {"png_rgb.png", "png_palette.png", "png_rgb_interlaced.png", "png_gray16.png"}, "cut.png",
      [](absl::string_view bytes, absl::string_view file) { return decode_png(bytes, file); });
}

TEST(PngTest, CorruptDataIsANamedErrorNeverACrash) {
  const std::string bytes = jpeg_fixture_bytes("png_rgb_interlaced.png");
  // A changed byte of image data (zlib's own checksum finds it first), and a
  // changed checksum of the chunk holding it.
  std::string changed = bytes;
  changed[bytes.find("IDAT") + 20] ^= 0x5A;
  expect_error(decode_png(changed, "data.png").status(), absl::StatusCode::kDataLoss, {"data.png", "IDAT"});
  std::string crc = bytes;
  crc[bytes.find("IEND") - 5] ^= 0x5A;  // the last byte of IDAT's CRC, before IEND's length
  expect_error(decode_png(crc, "crc.png").status(), absl::StatusCode::kDataLoss, {"crc.png", "IDAT", "CRC"});
  // Every single-byte change decodes or fails with the file's name.
  for (const char* name : {"png_rgb_interlaced.png", "png_palette_short.png", "png_rgba16.png"}) {
    const std::string png = jpeg_fixture_bytes(name);
    for (size_t i = 0; i < png.size(); ++i) {
      std::string flipped = png;
      flipped[i] = static_cast<char>(flipped[i] ^ 0x5A);
      const absl::StatusOr<Tensor> rgb = decode_png(flipped, "changed.png");
      if (!rgb.ok()) {
        EXPECT_EQ(rgb.status().message().substr(0, 12), "changed.png:") << rgb.status();
      }
    }
  }
}

TEST(PngTest, RejectsHugeAndEmptyDimensionsBeforeAllocating) {
  const std::string png = jpeg_fixture_bytes("png_rgb.png");
  expect_error(decode_png(with_size(png, 30000, 30000), "huge.png").status(), absl::StatusCode::kDataLoss,
               {"huge.png", "30000x30000", "larger than the limit"});
  expect_error(read_png_header(with_size(png, 30000, 30000), "huge.png").status(), absl::StatusCode::kDataLoss,
               {"huge.png", "larger than the limit"});
  expect_error(decode_png(with_size(png, 0, 13), "empty.png").status(), absl::StatusCode::kDataLoss,
               {"empty.png", "IHDR"});
  expect_error(decode_png(png, "a.png", /*max_pixels=*/100).status(), absl::StatusCode::kDataLoss, {"a.png", "17x13"});
}

// Within the limit a header can still ask for more memory than there is:
// an error naming the file (kResourceExhausted), never an exception.
TEST(PngTest, OutOfMemoryIsAnErrorNamingTheFile) {
  if (!AddressSpaceLimit::usable()) GTEST_SKIP() << "the address-space limit does not work under sanitizers";
  // 16384 x 16384 (the limit): 768 MiB of RGB output.
  const std::string huge = with_size(jpeg_fixture_bytes("png_rgb.png"), 16384, 16384);
  // An interlaced 2-bit file of 16384 x 16384 holds its 64 MiB of samples
  // besides the caller's output.
  const std::string interlaced = with_size(jpeg_fixture_bytes("png_gray_2bit_interlaced.png"), 16384, 16384);
  const Tensor out = Tensor::allocate({16384, 16384, 3}, DType::kU8, Device::cpu());  // not touched
  {
    AddressSpaceLimit limit(int64_t{256} << 20);
    expect_error(decode_png(huge, "huge.png").status(), absl::StatusCode::kResourceExhausted,
                 {"huge.png", "16384x16384", "out of memory"});
  }
  {
    AddressSpaceLimit limit(int64_t{32} << 20);
    expect_error(decode_png_into(interlaced, "interlaced.png", kMaxPngPixels, out),
                 absl::StatusCode::kResourceExhausted, {"interlaced.png", "out of memory"});
  }
  ASSERT_OK(decode_png(jpeg_fixture_bytes("png_rgb.png"), "ok.png").status());
}

}  // namespace
}  // namespace ts::data
