#include "data/readers/png.h"

#include <png.h>

#include <algorithm>
#include <array>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status_macros.h"

namespace ts::data {
namespace {

constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

// A read struct over `bytes` with what its callbacks need. libpng's error
// handler must not return: ours keeps the message and longjmps back to the
// setjmp of call(), as libjpeg_call.h does for libjpeg.
struct Decoder {
  absl::string_view bytes;
  size_t offset = 0;
  png_structp png = nullptr;
  png_infop info = nullptr;
  char message[200] = {};

  explicit Decoder(absl::string_view file);
  ~Decoder() { png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr); }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
};

void on_error(png_structp png, png_const_charp message) {
  Decoder& d = *static_cast<Decoder*>(png_get_error_ptr(png));
  std::snprintf(d.message, sizeof(d.message), "%s", message);
  png_longjmp(png, 1);
}

// libpng warns of what leaves the pixels whole: an ancillary chunk it drops
// (a bad checksum, a malformed chunk), data after the image, a palette index
// past the palette's end (the benign errors, made warnings below). Pillow
// decodes those files as we then do.
void on_warning(png_structp, png_const_charp) {}

void read_bytes(png_structp png, png_bytep out, size_t count) {
  Decoder& d = *static_cast<Decoder*>(png_get_io_ptr(png));
  if (count > d.bytes.size() - d.offset) png_error(png, "the file ends early (truncated PNG)");
  std::memcpy(out, d.bytes.data() + d.offset, count);
  d.offset += count;
}

Decoder::Decoder(absl::string_view file) : bytes(file) {
  png = png_create_read_struct(PNG_LIBPNG_VER_STRING, this, &on_error, &on_warning);
  if (png != nullptr) info = png_create_info_struct(png);
}

// Runs `calls` (libpng calls on d) and returns whether they finished; when
// not, d.message says why. A failure leaves `calls` by longjmp, so nothing
// in it may have a destructor. Never inlined (it calls setjmp).
template <typename Calls>
bool call(Decoder& d, Calls&& calls) {
  if (setjmp(png_jmpbuf(d.png)) != 0) return false;
  calls();
  return true;
}

// libpng says "out of memory" (or zlib "insufficient memory") only in words.
absl::Status failure(absl::string_view name, const Decoder& d) {
  if (absl::StrContains(absl::AsciiStrToLower(d.message), "memory")) {
    return absl::ResourceExhaustedError(absl::StrCat(name, ": out of memory decoding a PNG: ", d.message));
  }
  return absl::DataLossError(absl::StrCat(name, ": cannot decode PNG: ", d.message));
}

struct Layout {
  PngHeader header;
  int bit_depth = 0;
  int color_type = 0;
  bool interlaced = false;
};

// Reads the signature and the chunks before the image data into d.
absl::StatusOr<Layout> start_reading(Decoder& d, absl::string_view name, int64_t max_pixels) {
  if (!is_png(d.bytes)) {
    return absl::DataLossError(absl::StrCat(name, ": not a PNG file (", d.bytes.size(), " bytes, no PNG signature)"));
  }
  if (d.info == nullptr) return absl::ResourceExhaustedError(absl::StrCat(name, ": cannot make a PNG decoder"));
  Layout layout;
  png_uint_32 width = 0, height = 0;
  const bool read = call(d, [&] {
    png_set_read_fn(d.png, &d, &read_bytes);
    // Pillow's convert("RGB") uses no ancillary chunk but tRNS (and only to
    // drop it): skip the others (their checksums are still checked) rather
    // than parse ICC profiles and compressed text.
    png_set_keep_unknown_chunks(d.png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
    png_set_benign_errors(d.png, 1);
    png_read_info(d.png, d.info);
    png_get_IHDR(d.png, d.info, &width, &height, &layout.bit_depth, &layout.color_type, nullptr, nullptr, nullptr);
    layout.interlaced = png_get_interlace_type(d.png, d.info) != PNG_INTERLACE_NONE;
  });
  if (!read) return failure(name, d);
  layout.header = PngHeader{static_cast<int64_t>(height), static_cast<int64_t>(width)};
  if (layout.header.height * layout.header.width > max_pixels) {
    return absl::DataLossError(
        absl::StrCat(name, ": a ", width, "x", height, " PNG is larger than the limit of ", max_pixels, " pixels"));
  }
  return layout;
}

// Sample x of a row of `depth`-bit samples, packed from the high bits.
inline int packed_sample(const uint8_t* row, int64_t x, int depth) {
  const int64_t bit = x * depth;
  return (row[bit >> 3] >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
}

// One decoded row (libpng's samples, untransformed) to RGB as Pillow's
// convert("RGB") makes it: `palette` is 256 RGB entries, black past the
// file's.
void row_to_rgb(const uint8_t* raw, int64_t width, const Layout& layout, const uint8_t* palette, uint8_t* rgb) {
  const int depth = layout.bit_depth;
  const int bytes = depth == 16 ? 2 : 1;  // a sample's, for 8 and 16 bits
  switch (layout.color_type) {
    case PNG_COLOR_TYPE_GRAY:
      for (int64_t x = 0; x < width; ++x, rgb += 3) {
        int v;
        if (depth == 16) {
          v = std::min((raw[2 * x] << 8) | raw[2 * x + 1], 255);  // Pillow's I;16 to RGB clips
        } else if (depth == 8) {
          v = raw[x];
        } else {
          v = packed_sample(raw, x, depth) * (255 / ((1 << depth) - 1));  // Pillow's "1", L;2, L;4
        }
        rgb[0] = rgb[1] = rgb[2] = static_cast<uint8_t>(v);
      }
      break;
    case PNG_COLOR_TYPE_PALETTE:
      for (int64_t x = 0; x < width; ++x, rgb += 3) {
        std::memcpy(rgb, palette + 3 * (depth == 8 ? raw[x] : packed_sample(raw, x, depth)), 3);
      }
      break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:  // gray's high byte; alpha dropped
      for (int64_t x = 0; x < width; ++x, rgb += 3) rgb[0] = rgb[1] = rgb[2] = raw[2 * bytes * x];
      break;
    default: {  // RGB, RGBA: each sample's high byte; alpha dropped
      const int64_t stride = (layout.color_type == PNG_COLOR_TYPE_RGB_ALPHA ? 4 : 3) * bytes;
      for (int64_t x = 0; x < width; ++x, rgb += 3, raw += stride) {
        rgb[0] = raw[0];
        rgb[1] = raw[bytes];
        rgb[2] = raw[2 * bytes];
      }
    }
  }
}

}  // namespace

bool is_png(absl::string_view bytes) {
  return bytes.size() >= sizeof(kSignature) && std::memcmp(bytes.data(), kSignature, sizeof(kSignature)) == 0;
}

absl::StatusOr<PngHeader> read_png_header(absl::string_view bytes, absl::string_view name, int64_t max_pixels) {
  Decoder d(bytes);
  ASSIGN_OR_RETURN(const Layout layout, start_reading(d, name, max_pixels));
  return layout.header;
}

absl::Status decode_png_into(absl::string_view bytes, absl::string_view name, int64_t max_pixels, const Tensor& out) {
  Decoder d(bytes);
  ASSIGN_OR_RETURN(const Layout layout, start_reading(d, name, max_pixels));
  const int64_t height = layout.header.height, width = layout.header.width;
  if (!out.defined() || !out.device().is_cpu() || out.dtype() != DType::kU8 || !out.is_contiguous() ||
      out.shape() != Shape({height, width, 3})) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": decoding a ", height, "x", width,
                                                   " PNG needs a contiguous CPU u8 [", height, ", ", width,
                                                   ", 3], not ", out.defined() ? out.describe() : "undefined"));
  }
  std::array<uint8_t, 256 * 3> palette{};
  size_t row_bytes = 0;
  int passes = 1;
  const bool started = call(d, [&] {
    png_colorp entries = nullptr;
    int count = 0;
    if (png_get_PLTE(d.png, d.info, &entries, &count) != 0) {
      for (int i = 0; i < count && i < 256; ++i) {
        palette[3 * i] = entries[i].red;
        palette[3 * i + 1] = entries[i].green;
        palette[3 * i + 2] = entries[i].blue;
      }
    }
    passes = png_set_interlace_handling(d.png);
    png_read_update_info(d.png, d.info);
    row_bytes = png_get_rowbytes(d.png, d.info);
  });
  if (!started) return failure(name, d);
  // 8-bit RGB is decoded in place. Others go through libpng's rows: one at
  // a time, or all of them for an interlaced file, whose passes each add to
  // every row.
  uint8_t* rgb = out.data<uint8_t>();
  const bool in_place = layout.bit_depth == 8 && layout.color_type == PNG_COLOR_TYPE_RGB;
  const int64_t raw_rows = in_place ? 0 : layout.interlaced ? height : 1;
  std::unique_ptr<uint8_t[]> raw(raw_rows > 0 ? new (std::nothrow) uint8_t[raw_rows * row_bytes] : nullptr);
  if (raw_rows > 0 && raw == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(name, ": out of memory decoding a ", width, "x", height,
                                                     " PNG: its ", raw_rows * row_bytes, " bytes of samples"));
  }
  const bool decoded = call(d, [&] {
    for (int pass = 0; pass < passes; ++pass) {
      for (int64_t y = 0; y < height; ++y) {
        uint8_t* row = in_place ? rgb + y * width * 3 : raw.get() + (layout.interlaced ? y : 0) * row_bytes;
        png_read_row(d.png, row, nullptr);
        if (!in_place && !layout.interlaced) row_to_rgb(row, width, layout, palette.data(), rgb + y * width * 3);
      }
    }
    // Reads on to IEND: a file cut after its image data is an error too, as
    // a JPEG's is.
    png_read_end(d.png, nullptr);
  });
  if (!decoded) return failure(name, d);
  if (!in_place && layout.interlaced) {
    for (int64_t y = 0; y < height; ++y) {
      row_to_rgb(raw.get() + y * row_bytes, width, layout, palette.data(), rgb + y * width * 3);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> decode_png(absl::string_view bytes, absl::string_view name, int64_t max_pixels) {
  ASSIGN_OR_RETURN(const PngHeader header, read_png_header(bytes, name, max_pixels));
  absl::StatusOr<Tensor> rgb = capture([&] {
    return Tensor::allocate({header.height, header.width, 3}, DType::kU8, Device::cpu());
  });
  if (!rgb.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat(name, ": out of memory decoding a ", header.width, "x",
                                                     header.height, " PNG: ", rgb.status().message()));
  }
  RETURN_IF_ERROR(decode_png_into(bytes, name, max_pixels, *rgb));
  return rgb;
}

}  // namespace ts::data
