#include "data/readers/jpeg.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"
#include "data/readers/libjpeg_call.h"

namespace ts::data {
namespace {

// A progressive file of thousands of tiny scans makes libjpeg redo the
// output for each (a known denial of service); TurboJPEG's limit.
constexpr int kMaxScans = 500;

// Output rows handed to libjpeg a call.
constexpr int64_t kRowsPerRead = 64;

// libjpeg's warnings that leave the image data whole, which Pillow (deaf to
// every warning) decodes as we then do:
// - JWRN_EXTRANEOUS_DATA: bytes between segments, skipped; some writers
//   leave them, and a few of ImageNet's files hold them;
// - JWRN_JFIF_MAJOR: a JFIF version in APP0 that libjpeg does not know,
//   whose fields play no part in decoding;
// - JWRN_NOT_SEQUENTIAL: a sequential scan's spectral selection or
//   approximation fields (Ss, Se, Ah, Al: progressive scans' only) not
//   0, 63, 0, 0, which a sequential decode ignores;
// - JWRN_ADOBE_XFORM: an Adobe marker's unknown color transform code, for
//   which libjpeg takes the usual one (YCbCr for 3 components, YCCK for 4),
//   as Pillow, decoding with libjpeg, does too;
// - JWRN_BOGUS_ICC: a malformed ICC profile marker, raised only by
//   jpeg_read_icc_profile, which this decoder never calls (neither Pillow's
//   convert("RGB") nor we apply a profile).
// The others mean entropy-coded data damaged or missing (JWRN_HIT_MARKER,
// JWRN_JPEG_EOF, JWRN_HUFF_BAD_CODE, JWRN_ARITH_BAD_CODE, JWRN_MUST_RESYNC),
// scans that break the progression (JWRN_BOGUS_PROGRESSION), or our misuse
// (JWRN_TOO_MUCH_DATA): each fails the decode.
constexpr int kHarmlessWarnings[] = {JWRN_EXTRANEOUS_DATA, JWRN_JFIF_MAJOR, JWRN_NOT_SEQUENTIAL, JWRN_ADOBE_XFORM,
                                     JWRN_BOGUS_ICC};

void limit_scans(j_common_ptr cinfo) {
  if (reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number > kMaxScans) {
    libjpeg::fail(cinfo, "a progressive JPEG of more than 500 scans");
  }
}

// A decompressor with its error handler and scan limit. Each loader worker
// keeps one for its lifetime: making one allocates libjpeg's state.
struct Decompressor {
  jpeg_decompress_struct cinfo;
  libjpeg::ErrorHandler error;
  jpeg_progress_mgr progress;
  bool created = false;

  Decompressor() {
    error.tolerated_warnings = kHarmlessWarnings;
    cinfo.err = libjpeg::install(error);
    created = libjpeg::call(error, [&] { jpeg_create_decompress(&cinfo); });
    progress.progress_monitor = &limit_scans;
    cinfo.progress = &progress;  // after the create, which clears it
  }
  ~Decompressor() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
};

absl::StatusOr<Decompressor*> thread_decompressor(absl::string_view name) {
  thread_local std::optional<Decompressor> decompressor;
  if (!decompressor.has_value()) decompressor.emplace();
  if (!decompressor->created) {
    const std::string message = decompressor->error.message;
    decompressor.reset();
    return absl::ResourceExhaustedError(absl::StrCat(name, ": cannot make a JPEG decompressor: ", message));
  }
  return &*decompressor;
}

// The failure of the last call on `d`, which is then ready for the next file.
absl::Status corrupt(absl::string_view name, Decompressor& d) {
  absl::Status status;
  if (!d.error.failed_on_warning && d.error.mgr.msg_code == JERR_OUT_OF_MEMORY) {
    // libjpeg's own buffers (a progressive file holds all its coefficients)
    // did not fit: the file may be fine, the memory is not there.
    status = absl::ResourceExhaustedError(absl::StrCat(name, ": out of memory decoding a ", d.cinfo.image_width, "x",
                                                       d.cinfo.image_height, " JPEG: ", d.error.message));
  } else {
    // A warning (truncated data, a bad Huffman code) would have left a partly
    // gray or garbled image: it fails like an error.
    status = absl::DataLossError(absl::StrCat(
        name,
        d.error.failed_on_warning ? ": corrupt or truncated JPEG data: " : ": cannot decode JPEG: ", d.error.message));
  }
  jpeg_abort_decompress(&d.cinfo);
  return status;
}

// A decode's buffer, or an error naming the file when the memory is not
// there (kResourceExhausted: Tensor::allocate throws on the op surface).
absl::StatusOr<Tensor> allocate_pixels(absl::string_view name, int64_t height, int64_t width, int64_t channels) {
  absl::StatusOr<Tensor> pixels = capture([&] {
    return Tensor::allocate({height, width, channels}, DType::kU8, Device::cpu());
  });
  if (pixels.ok()) return pixels;
  return absl::ResourceExhaustedError(
      absl::StrCat(name, ": out of memory decoding a ", width, "x", height, " JPEG: ", pixels.status().message()));
}

// Pillow's MULDIV255: a * b / 255 rounded, in integers.
inline int muldiv255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

// Adobe CMYK (stored inverted, as Photoshop writes it and as Pillow assumes
// for every 4-channel JPEG) to RGB with Pillow's cmyk2rgb on Pillow's
// un-inverted values: with k = 255 - K, R = k - k * (255 - C) / 255.
void cmyk_to_rgb(const uint8_t* cmyk, int64_t pixels, uint8_t* rgb) {
  for (int64_t i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    const int k = cmyk[3];  // Pillow's 255 - K, as stored
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<uint8_t>(k - muldiv255(255 - cmyk[c], k));
  }
}

// Reads the headers of `bytes` into d, which is left ready to decode them
// (the caller aborts it when it does not).
absl::StatusOr<JpegHeader> start_reading(Decompressor& d, absl::string_view bytes, absl::string_view name,
                                         int64_t max_pixels) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0xFF ||
      static_cast<unsigned char>(bytes[1]) != 0xD8) {
    return absl::DataLossError(
        absl::StrCat(name, ": not a JPEG file (", bytes.size(), " bytes, no start-of-image marker FF D8)"));
  }
  if (bytes.size() > std::numeric_limits<unsigned long>::max()) {
    return absl::DataLossError(absl::StrCat(name, ": ", bytes.size(), " bytes is too large a JPEG file"));
  }
  const bool read = libjpeg::call(d.error, [&] {
    jpeg_mem_src(&d.cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    jpeg_read_header(&d.cinfo, TRUE);
  });
  if (!read) return corrupt(name, d);
  JpegHeader header;
  header.height = d.cinfo.image_height;
  header.width = d.cinfo.image_width;
  header.color = d.cinfo.jpeg_color_space == JCS_GRAYSCALE                                        ? JpegColor::kGray
                 : (d.cinfo.jpeg_color_space == JCS_CMYK || d.cinfo.jpeg_color_space == JCS_YCCK) ? JpegColor::kCmyk
                                                                                                  : JpegColor::kColor;
  if (int64_t{header.width} * header.height > max_pixels) {
    jpeg_abort_decompress(&d.cinfo);
    return absl::DataLossError(absl::StrCat(name, ": a ", header.width, "x", header.height,
                                            " JPEG is larger than the limit of ", max_pixels, " pixels"));
  }
  return header;
}

}  // namespace

absl::StatusOr<JpegHeader> read_jpeg_header(absl::string_view bytes, absl::string_view name, int64_t max_pixels) {
  ASSIGN_OR_RETURN(Decompressor * d, thread_decompressor(name));
  ASSIGN_OR_RETURN(const JpegHeader header, start_reading(*d, bytes, name, max_pixels));
  jpeg_abort_decompress(&d->cinfo);
  return header;
}

int jpeg_scale_denominator(int64_t height, int64_t width, int64_t min_height, int64_t min_width) {
  for (int denominator : {8, 4, 2}) {
    if (jpeg_scaled_size(height, denominator) >= min_height && jpeg_scaled_size(width, denominator) >= min_width) {
      return denominator;
    }
  }
  return 1;
}

absl::Status decode_jpeg_into(absl::string_view bytes, absl::string_view name, const JpegDecodeOptions& options,
                              const Tensor& out) {
  const int denominator = options.scale_denominator;
  if (denominator != 1 && denominator != 2 && denominator != 4 && denominator != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": JPEG scale 1/", denominator, " is not one of 1, 1/2, 1/4, 1/8"));
  }
  ASSIGN_OR_RETURN(Decompressor * d, thread_decompressor(name));
  ASSIGN_OR_RETURN(const JpegHeader header, start_reading(*d, bytes, name, options.max_pixels));
  const int64_t height = jpeg_scaled_size(header.height, denominator);
  const int64_t width = jpeg_scaled_size(header.width, denominator);
  if (!out.defined() || !out.device().is_cpu() || out.dtype() != DType::kU8 || !out.is_contiguous() ||
      out.shape() != Shape({height, width, 3})) {
    jpeg_abort_decompress(&d->cinfo);
    return absl::InvalidArgumentError(absl::StrCat(name, ": decoding a ", height, "x", width,
                                                   " image needs a contiguous CPU u8 [", height, ", ", width,
                                                   ", 3], not ", out.defined() ? out.describe() : "undefined"));
  }
  // libjpeg converts gray and YCbCr to RGB itself, not CMYK: that comes
  // through a strip of CMYK rows (at most 1 MiB, or one row) converted into
  // `out` as each is read; a whole CMYK image would be a third more than
  // the output again.
  const bool cmyk = header.color == JpegColor::kCmyk;
  const int64_t strip_rows = cmyk ? std::clamp<int64_t>((int64_t{1} << 20) / (width * 4), 1, kRowsPerRead) : 0;
  Tensor strip;
  if (cmyk) {
    absl::StatusOr<Tensor> allocated = allocate_pixels(name, strip_rows, width, 4);
    if (!allocated.ok()) {
      jpeg_abort_decompress(&d->cinfo);
      return allocated.status();
    }
    strip = *std::move(allocated);
  }
  uint8_t* rgb = out.data<uint8_t>();
  // libjpeg's defaults are Pillow's: the accurate integer DCT and fancy
  // upsampling. The scale 1/denominator makes the size computed above.
  d->cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGB;
  d->cinfo.scale_num = 1;
  d->cinfo.scale_denom = static_cast<unsigned int>(denominator);
  // Up to kRowsPerRead rows a call, more than libjpeg makes at once (an iMCU
  // row group: 32 rows at most), so that it writes each group straight to
  // its place in `out`.
  JSAMPROW rows[kRowsPerRead];
  const bool decoded = libjpeg::call(d->error, [&] {
    jpeg_start_decompress(&d->cinfo);
    if (d->cinfo.output_height != height || d->cinfo.output_width != width) {
      libjpeg::fail(reinterpret_cast<j_common_ptr>(&d->cinfo), "libjpeg's scaled size differs from ours");
    }
    while (d->cinfo.output_scanline < d->cinfo.output_height) {
      const int64_t first = d->cinfo.output_scanline;
      const int64_t count = std::min<int64_t>(cmyk ? strip_rows : kRowsPerRead, height - first);
      for (int64_t y = 0; y < count; ++y) {
        rows[y] = cmyk ? strip.data<uint8_t>() + y * width * 4 : rgb + (first + y) * width * 3;
      }
      const int64_t read = jpeg_read_scanlines(&d->cinfo, rows, static_cast<JDIMENSION>(count));
      if (cmyk) cmyk_to_rgb(strip.data<uint8_t>(), read * width, rgb + first * width * 3);
    }
    // Reads on to the end-of-image marker: a file cut after the last scan
    // warns here.
    jpeg_finish_decompress(&d->cinfo);
  });
  if (!decoded) return corrupt(name, *d);
  return absl::OkStatus();
}

absl::StatusOr<Tensor> decode_jpeg(absl::string_view bytes, absl::string_view name, const JpegDecodeOptions& options) {
  ASSIGN_OR_RETURN(const JpegHeader header, read_jpeg_header(bytes, name, options.max_pixels));
  const int denominator = options.scale_denominator >= 1 ? options.scale_denominator : 1;
  ASSIGN_OR_RETURN(const Tensor rgb, allocate_pixels(name, jpeg_scaled_size(header.height, denominator),
                                                     jpeg_scaled_size(header.width, denominator), 3));
  RETURN_IF_ERROR(decode_jpeg_into(bytes, name, options, rgb));
  return rgb;
}

}  // namespace ts::data
