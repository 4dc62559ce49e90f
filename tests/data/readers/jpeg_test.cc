// JPEG decoding against Pillow (the fixture of tools/golden/jpeg_pillow.py):
// baseline and progressive, 4:2:0 and 4:4:4 color, grayscale and Adobe CMYK
// decode to Pillow's convert("RGB") pixels exactly, and so do the 1/2, 1/4
// and 1/8 scaled decodes to Pillow's draft(). Truncated, corrupt and
// oversized inputs, and memory that is not there, are errors naming the
// file, and so is damage behind bytes libjpeg skips or behind a harmless
// warning; header oddities libjpeg only warns of (an unknown JFIF version,
// a sequential scan's unused fields, an unknown Adobe transform) decode as
// Pillow decodes them.
#include "data/readers/jpeg.h"

#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "data/readers/libjpeg_call.h"
#include "gtest/gtest.h"
#include "tensor/ops.h"
#include "tests/data/readers/address_space_limit.h"
#include "tests/data/readers/jpeg_fixture.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::expect_every_truncation_fails;
using ::ts::data::testing::expect_same_pixels;
using ::ts::data::testing::jpeg_fixture_bytes;
using ::ts::data::testing::read_ppm_fixture;
using ::ts::testing::expect_error;

class JpegPillowTest : public ::testing::TestWithParam<const char*> {};

TEST_P(JpegPillowTest, DecodesAsPillow) {
  const std::string name = GetParam();
  ASSERT_OK_AND_ASSIGN(const Tensor rgb, decode_jpeg(jpeg_fixture_bytes(name + ".jpg"), name));
  EXPECT_EQ(rgb.dtype(), DType::kU8);
  expect_same_pixels(rgb, read_ppm_fixture(name + ".ppm"));
}

INSTANTIATE_TEST_SUITE_P(Fixture, JpegPillowTest,
                         ::testing::Values("baseline_420", "baseline_444", "progressive_420", "gray_baseline",
                                           "gray_progressive", "cmyk"));

TEST(JpegTest, ReadsTheHeader) {
  ASSERT_OK_AND_ASSIGN(const JpegHeader color, read_jpeg_header(jpeg_fixture_bytes("baseline_420.jpg"), "f"));
  EXPECT_EQ(color.height, 13);
  EXPECT_EQ(color.width, 17);
  EXPECT_EQ(color.color, JpegColor::kColor);
  ASSERT_OK_AND_ASSIGN(const JpegHeader gray, read_jpeg_header(jpeg_fixture_bytes("gray_progressive.jpg"), "f"));
  EXPECT_EQ(gray.color, JpegColor::kGray);
  ASSERT_OK_AND_ASSIGN(const JpegHeader cmyk, read_jpeg_header(jpeg_fixture_bytes("cmyk.jpg"), "f"));
  EXPECT_EQ(cmyk.color, JpegColor::kCmyk);
}

TEST(JpegTest, ScaledDecodesAsPillowDraft) {
  const std::string bytes = jpeg_fixture_bytes("scaled.jpg");
  for (int denominator : {2, 4, 8}) {
    SCOPED_TRACE(denominator);
    JpegDecodeOptions options;
    options.scale_denominator = denominator;
    ASSERT_OK_AND_ASSIGN(const Tensor rgb, decode_jpeg(bytes, "scaled.jpg", options));
    EXPECT_EQ(rgb.size(0), jpeg_scaled_size(37, denominator));
    EXPECT_EQ(rgb.size(1), jpeg_scaled_size(45, denominator));
    expect_same_pixels(rgb, read_ppm_fixture("scaled.1_" + std::to_string(denominator) + ".ppm"));
  }
}

TEST(JpegTest, ScaleDenominatorIsTheCheapestThatStaysLargeEnough) {
  EXPECT_EQ(jpeg_scale_denominator(375, 500, 224, 224), 1);
  EXPECT_EQ(jpeg_scale_denominator(448, 500, 224, 224), 2);
  EXPECT_EQ(jpeg_scale_denominator(446, 500, 224, 224), 1);  // 223 rows at 1/2
  EXPECT_EQ(jpeg_scale_denominator(1800, 2400, 224, 224), 8);
  EXPECT_EQ(jpeg_scale_denominator(1000, 3000, 256, 768), 2);  // (500, 1500)
  EXPECT_EQ(jpeg_scale_denominator(1793, 1793, 224, 224), 8);  // ceil(1793 / 8) = 225
  EXPECT_EQ(jpeg_scaled_size(37, 8), 5);
}

TEST(JpegTest, RejectsABadScale) {
  JpegDecodeOptions options;
  options.scale_denominator = 3;
  expect_error(decode_jpeg(jpeg_fixture_bytes("baseline_420.jpg"), "a.jpg", options).status(),
               absl::StatusCode::kInvalidArgument, {"a.jpg", "1/3"});
}

TEST(JpegTest, EveryTruncationIsANamedError) {
  expect_every_truncation_fails(
      {"baseline_420.jpg", "progressive_420.jpg", "gray_progressive.jpg", "cmyk.jpg"}, "cut.jpg",
      [](absl::string_view bytes, absl::string_view file) { return decode_jpeg(bytes, file); });
}

TEST(JpegTest, CorruptDataIsANamedErrorNeverACrash) {
  expect_error(decode_jpeg("", "empty.jpg").status(), absl::StatusCode::kDataLoss, {"empty.jpg", "not a JPEG"});
  expect_error(decode_jpeg("GIF89a...", "x.jpg").status(), absl::StatusCode::kDataLoss, {"x.jpg", "not a JPEG"});
  const std::string bytes = jpeg_fixture_bytes("baseline_420.jpg");
  // Entropy-coded data cut short but closed by an end-of-image marker, as a
  // broken download repaired by a careless tool looks: libjpeg only warns
  // (and fills the rest with gray), here it is an error.
  const std::string cut = bytes.substr(0, bytes.find("\xFF\xDA") + 60) + "\xFF\xD9";
  expect_error(decode_jpeg(cut, "cut.jpg").status(), absl::StatusCode::kDataLoss,
               {"cut.jpg", "corrupt or truncated JPEG data"});
  // Every single-byte change decodes or fails with the file's name.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string changed = bytes;
    changed[i] = static_cast<char>(changed[i] ^ 0x5A);
    const absl::StatusOr<Tensor> rgb = decode_jpeg(changed, "changed.jpg");
    if (!rgb.ok()) {
      EXPECT_EQ(rgb.status().message().substr(0, 12), "changed.jpg:") << rgb.status();
    }
  }
}

// Bytes a writer left between segments, which libjpeg skips with a warning
// (as in a few of ImageNet's files): the image is whole, and decodes as the
// clean file does, as Pillow decodes it.
TEST(JpegTest, ExtraneousBytesBetweenSegmentsAreSkipped) {
  const std::string bytes = jpeg_fixture_bytes("baseline_420.jpg");
  ASSERT_OK_AND_ASSIGN(const Tensor clean, decode_jpeg(bytes, "clean.jpg"));
  for (const size_t at : {bytes.rfind("\xFF\xD9"), bytes.find("\xFF\xC4"), bytes.find("\xFF\xDA")}) {
    SCOPED_TRACE(::testing::Message() << "3 bytes before offset " << at);
    const std::string padded = bytes.substr(0, at) + std::string("\x01\x02\x03", 3) + bytes.substr(at);
    ASSERT_OK_AND_ASSIGN(const Tensor rgb, decode_jpeg(padded, "padded.jpg"));
    ::ts::testing::expect_equal(rgb, ::ts::testing::ref_of(clean));
  }
}

// The skipped bytes excuse nothing after them: entropy-coded data cut short
// behind them is still an error (libjpeg reports only a decode's first
// warning as text, so telling them apart needs each warning's code).
TEST(JpegTest, DamageAfterSkippedBytesIsAnError) {
  const std::string bytes = jpeg_fixture_bytes("baseline_420.jpg");
  const size_t scan = bytes.find("\xFF\xDA");
  for (const size_t at : {bytes.find("\xFF\xC4"), scan}) {
    SCOPED_TRACE(::testing::Message() << "3 bytes before offset " << at);
    const std::string padded = bytes.substr(0, at) + std::string("\x01\x02\x03", 3) + bytes.substr(at);
    for (const std::string& end : {std::string("\xFF\xD9"), std::string()}) {
      const std::string cut = padded.substr(0, scan + 3 + 60) + end;
      expect_error(decode_jpeg(cut, "cut.jpg").status(), absl::StatusCode::kDataLoss,
                   {"cut.jpg", "corrupt or truncated JPEG data"});
    }
  }
}

// `bytes` with the byte at `offset` set to `value`.
std::string patched(std::string bytes, size_t offset, uint8_t value) {
  bytes.at(offset) = static_cast<char>(value);
  return bytes;
}

// The offset of the first byte of `field` in the first segment of marker
// FF `marker` (length bytes included in the count: 2 is the first payload
// byte).
size_t segment_byte(const std::string& bytes, uint8_t marker, size_t field) {
  const size_t at = bytes.find(std::string{'\xFF', static_cast<char>(marker)});
  EXPECT_NE(at, std::string::npos) << "no marker FF " << std::hex << int{marker};
  return at + 2 + field;
}

// Header oddities libjpeg warns of but that leave the image data whole:
// Pillow 13 decodes these copies to the unpatched file's pixels, and so do
// we.
TEST(JpegTest, HarmlessHeaderWarningsDecodeAsTheCleanFile) {
  for (const char* name : {"baseline_420", "baseline_444", "gray_baseline"}) {
    SCOPED_TRACE(name);
    const std::string bytes = jpeg_fixture_bytes(std::string(name) + ".jpg");
    const Tensor expected = read_ppm_fixture(std::string(name) + ".ppm");
    // APP0: length (2), "JFIF\0" (5), major, minor: JFIF 2.01 and 3.01
    // ("unknown JFIF revision number").
    const size_t major = segment_byte(bytes, 0xE0, 7);
    ASSERT_EQ(bytes.substr(major - 5, 5), std::string("JFIF\0", 5));
    for (const uint8_t version : {2, 3}) {
      ASSERT_OK_AND_ASSIGN(const Tensor rgb, decode_jpeg(patched(bytes, major, version), "jfif.jpg"));
      expect_same_pixels(rgb, expected);
    }
    // SOS: length (2), Ns, Ns x (Cs, Td/Ta), Ss, Se, Ah/Al: Se = 62 and
    // Ss = 1 in a sequential file ("Invalid SOS parameters for sequential
    // JPEG"), fields only progressive scans use.
    const size_t sos = segment_byte(bytes, 0xDA, 0);
    const size_t ss = sos + 3 + 2 * static_cast<uint8_t>(bytes[sos + 2]);
    ASSERT_EQ(static_cast<uint8_t>(bytes[ss + 1]), 63);
    for (const auto& [offset, value] : {std::pair<size_t, uint8_t>{ss + 1, 62}, {ss, 1}}) {
      ASSERT_OK_AND_ASSIGN(const Tensor rgb, decode_jpeg(patched(bytes, offset, value), "sos.jpg"));
      expect_same_pixels(rgb, expected);
    }
  }
}

// An Adobe marker's unknown transform code: libjpeg (in Pillow too) takes a
// 4-component file as YCCK, so the copy decodes as one that says YCCK.
TEST(JpegTest, AnUnknownAdobeTransformIsTakenAsLibjpegAndPillowTakeIt) {
  const std::string bytes = jpeg_fixture_bytes("cmyk.jpg");
  // APP14: length (2), "Adobe" (5), version (2), flags (2 x 2), transform.
  const size_t transform = segment_byte(bytes, 0xEE, 13);
  ASSERT_EQ(bytes.substr(transform - 11, 5), "Adobe");
  ASSERT_EQ(bytes[transform], 0);  // CMYK
  ASSERT_OK_AND_ASSIGN(const Tensor ycck, decode_jpeg(patched(bytes, transform, 2), "ycck.jpg"));
  ASSERT_OK_AND_ASSIGN(const Tensor unknown, decode_jpeg(patched(bytes, transform, 5), "unknown.jpg"));
  expect_same_pixels(unknown, ycck);
}

// A harmless warning excuses no damage after it.
TEST(JpegTest, DamageAfterAHarmlessWarningIsAnError) {
  const std::string bytes = jpeg_fixture_bytes("baseline_420.jpg");
  const std::string jfif3 = patched(bytes, segment_byte(bytes, 0xE0, 7), 3);
  const std::string cut = jfif3.substr(0, jfif3.find("\xFF\xDA") + 60) + "\xFF\xD9";
  expect_error(decode_jpeg(cut, "cut.jpg").status(), absl::StatusCode::kDataLoss,
               {"cut.jpg", "corrupt or truncated JPEG data"});
}

// A progressive JPEG of 16x16 pixels whose coefficients come in single-band
// scans, each refined bit by bit: 2 DC scans and 3 * 63 * (refinements + 1)
// AC scans.
std::string progressive_jpeg_of_many_scans(int refinements) {
  std::vector<jpeg_scan_info> scans;
  scans.push_back({3, {0, 1, 2, 0}, 0, 0, 0, 1});
  scans.push_back({3, {0, 1, 2, 0}, 0, 0, 1, 0});
  for (int c = 0; c < 3; ++c) {
    for (int k = 1; k < 64; ++k) {
      for (int al = refinements; al >= 0; --al)
        scans.push_back({1, {c, 0, 0, 0}, k, k, al == refinements ? 0 : al + 1, al});
    }
  }
  std::vector<uint8_t> pixels(16 * 16 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37);
  jpeg_compress_struct cinfo;
  libjpeg::ErrorHandler error;
  cinfo.err = libjpeg::install(error);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const bool encoded = libjpeg::call(error, [&] {
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buffer, &size);
    cinfo.image_width = cinfo.image_height = 16;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    cinfo.scan_info = scans.data();
    cinfo.num_scans = static_cast<int>(scans.size());
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < 16) {
      JSAMPROW row = pixels.data() + cinfo.next_scanline * 16 * 3;
      jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
  });
  jpeg_destroy_compress(&cinfo);
  std::string out = encoded ? std::string(reinterpret_cast<const char*>(buffer), size) : std::string();
  std::free(buffer);
  EXPECT_TRUE(encoded) << error.message;
  return out;
}

// An Adobe CMYK JPEG of width x height pixels of varied ink, and its pixels
// as libjpeg decodes them to CMYK (all rows in one buffer).
std::pair<std::string, std::vector<uint8_t>> cmyk_jpeg(int width, int height) {
  std::vector<uint8_t> ink(static_cast<size_t>(width) * height * 4);
  for (size_t i = 0; i < ink.size(); ++i) ink[i] = static_cast<uint8_t>((i * 37 + i / 97) % 251);
  jpeg_compress_struct compress;
  libjpeg::ErrorHandler error;
  compress.err = libjpeg::install(error);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const bool encoded = libjpeg::call(error, [&] {
    jpeg_create_compress(&compress);
    jpeg_mem_dest(&compress, &buffer, &size);
    compress.image_width = width;
    compress.image_height = height;
    compress.input_components = 4;
    compress.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&compress);  // writes an Adobe marker, transform 0
    jpeg_start_compress(&compress, TRUE);
    while (compress.next_scanline < compress.image_height) {
      JSAMPROW row = ink.data() + compress.next_scanline * width * 4;
      jpeg_write_scanlines(&compress, &row, 1);
    }
    jpeg_finish_compress(&compress);
  });
  jpeg_destroy_compress(&compress);
  std::string jpeg = encoded ? std::string(reinterpret_cast<const char*>(buffer), size) : std::string();
  std::free(buffer);
  EXPECT_TRUE(encoded) << error.message;
  jpeg_decompress_struct decompress;
  decompress.err = libjpeg::install(error);
  std::vector<uint8_t> decoded(ink.size());
  const bool read = libjpeg::call(error, [&] {
    jpeg_create_decompress(&decompress);
    jpeg_mem_src(&decompress, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size());
    jpeg_read_header(&decompress, TRUE);
    decompress.out_color_space = JCS_CMYK;
    jpeg_start_decompress(&decompress);
    while (decompress.output_scanline < decompress.output_height) {
      JSAMPROW row = decoded.data() + decompress.output_scanline * width * 4;
      jpeg_read_scanlines(&decompress, &row, 1);
    }
    jpeg_finish_decompress(&decompress);
  });
  jpeg_destroy_decompress(&decompress);
  EXPECT_TRUE(read) << error.message;
  return {jpeg, decoded};
}

// CMYK comes through a strip of rows (64 here) converted as each is read:
// every strip, the last one short, lands in its place, converted with
// Pillow's cmyk2rgb (R = k - k (255 - C) / 255 with k = the stored K,
// rounded as its MULDIV255).
TEST(JpegTest, CmykDecodesStripByStrip) {
  const int width = 40, height = 200;
  const auto [jpeg, cmyk] = cmyk_jpeg(width, height);
  ASSERT_OK_AND_ASSIGN(const Tensor rgb, decode_jpeg(jpeg, "tall_cmyk.jpg"));
  ASSERT_EQ(rgb.shape(), Shape({height, width, 3}));
  const std::vector<uint8_t> actual = to_vector<uint8_t>(rgb);
  int64_t differing = 0;
  for (int64_t i = 0; i < int64_t{width} * height; ++i) {
    const int k = cmyk[4 * i + 3];
    for (int c = 0; c < 3; ++c) {
      const int t = (255 - cmyk[4 * i + c]) * k + 128;
      differing += actual[3 * i + c] != k - (((t >> 8) + t) >> 8);
    }
  }
  EXPECT_EQ(differing, 0);
}

// Each scan makes libjpeg redo the output: past 500 a file is refused (a
// known denial of service), while one of 380 decodes.
TEST(JpegTest, RefusesMoreThan500Scans) {
  ASSERT_OK(decode_jpeg(progressive_jpeg_of_many_scans(1), "380.jpg").status());
  expect_error(decode_jpeg(progressive_jpeg_of_many_scans(2), "569.jpg").status(), absl::StatusCode::kDataLoss,
               {"569.jpg", "more than 500 scans"});
}

TEST(JpegTest, RejectsHugeAndEmptyDimensionsBeforeAllocating) {
  std::string bytes = jpeg_fixture_bytes("baseline_420.jpg");
  // SOF0: FF C0, length (2), precision (1), height (2), width (2).
  const size_t sof = bytes.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  const char size_30000[] = {0x75, 0x30, 0x75, 0x30};  // 30000 x 30000: 2.7 GB of RGB
  bytes.replace(sof + 5, 4, size_30000, 4);
  expect_error(decode_jpeg(bytes, "huge.jpg").status(), absl::StatusCode::kDataLoss,
               {"huge.jpg", "30000x30000", "larger than the limit"});
  // A tables-only stream (SOI, tables, EOI), and a frame of no columns.
  const std::string tables_only = jpeg_fixture_bytes("baseline_420.jpg").substr(0, sof) + "\xFF\xD9";
  expect_error(decode_jpeg(tables_only, "tables.jpg").status(), absl::StatusCode::kDataLoss,
               {"tables.jpg", "contains no image"});
  std::string no_columns = jpeg_fixture_bytes("baseline_420.jpg");
  no_columns.replace(sof + 7, 2, std::string(2, '\0'));
  expect_error(decode_jpeg(no_columns, "empty.jpg").status(), absl::StatusCode::kDataLoss, {"empty.jpg", "Empty"});
  JpegDecodeOptions small;
  small.max_pixels = 100;
  expect_error(decode_jpeg(jpeg_fixture_bytes("baseline_420.jpg"), "a.jpg", small).status(),
               absl::StatusCode::kDataLoss, {"a.jpg", "17x13"});
}

// `jpeg` with its frame header (the first FF `sof` marker) saying width x
// height.
std::string with_size(std::string jpeg, uint8_t sof, uint16_t width, uint16_t height) {
  // SOFn: FF Cn, length (2), precision (1), height (2), width (2).
  const size_t at = jpeg.find(std::string{'\xFF', static_cast<char>(sof)});
  EXPECT_NE(at, std::string::npos);
  const char size[] = {static_cast<char>(height >> 8), static_cast<char>(height & 0xFF), static_cast<char>(width >> 8),
                       static_cast<char>(width & 0xFF)};
  jpeg.replace(at + 5, 4, size, 4);
  return jpeg;
}

// Within the pixel limit a header can still ask for more memory than there
// is: an error naming the file (kResourceExhausted), never an exception,
// whether our buffer or libjpeg's is the one that does not fit.
TEST(JpegTest, OutOfMemoryIsAnErrorNamingTheFile) {
  if (!::ts::data::testing::AddressSpaceLimit::usable()) {
    GTEST_SKIP() << "the address-space limit does not work under sanitizers";
  }
  using ::ts::data::testing::AddressSpaceLimit;
  // A CMYK frame of 16384 x 16384 (the limit) with no data behind it:
  // 768 MiB of RGB output.
  const std::string cmyk = with_size(jpeg_fixture_bytes("cmyk.jpg"), 0xC0, 16384, 16384);
  ASSERT_OK_AND_ASSIGN(const JpegHeader header, read_jpeg_header(cmyk, "huge.jpg"));
  ASSERT_EQ(header.color, JpegColor::kCmyk);
  // A progressive 4:2:0 frame of 8192 x 8192, whose coefficients libjpeg
  // holds (192 MiB) besides the caller's output.
  const std::string progressive = with_size(jpeg_fixture_bytes("progressive_420.jpg"), 0xC2, 8192, 8192);
  const Tensor out = Tensor::allocate({8192, 8192, 3}, DType::kU8, Device::cpu());  // not touched
  {
    AddressSpaceLimit limit(int64_t{256} << 20);
    expect_error(decode_jpeg(cmyk, "huge.jpg").status(), absl::StatusCode::kResourceExhausted,
                 {"huge.jpg", "16384x16384", "out of memory"});
  }
  {
    AddressSpaceLimit limit(int64_t{64} << 20);
    expect_error(decode_jpeg_into(progressive, "big.jpg", {}, out), absl::StatusCode::kResourceExhausted,
                 {"big.jpg", "8192x8192", "out of memory", "Insufficient memory"});
  }
  // The thread's decompressor is ready for the next file.
  ASSERT_OK_AND_ASSIGN(const Tensor rgb, decode_jpeg(jpeg_fixture_bytes("cmyk.jpg"), "cmyk.jpg"));
  expect_same_pixels(rgb, read_ppm_fixture("cmyk.ppm"));
}

TEST(JpegTest, DecodesConcurrently) {
  const std::string bytes = jpeg_fixture_bytes("progressive_420.jpg");
  const Tensor expected = read_ppm_fixture("progressive_420.ppm");
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const absl::StatusOr<Tensor> rgb = decode_jpeg(bytes, "p.jpg");
        if (!rgb.ok() || to_vector<uint8_t>(*rgb) != to_vector<uint8_t>(expected)) ++mismatches[t];
        // Errors on the same thread's decompressor leave it usable.
        if (decode_jpeg(bytes.substr(0, 300), "cut.jpg").ok()) ++mismatches[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace ts::data
