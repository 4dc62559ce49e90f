// PNG decoding with libpng to 8-bit RGB, pixel for pixel what Pillow 13's
// Image.open(f).convert("RGB") gives, for the few PNGs that image folders of
// JPEGs hold (ImageNet's train/n02105855/n02105855_2933.JPEG is one, which
// torchvision's loader, telling formats by content, decodes).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace ts::data {

// The largest image decode_png accepts by default (width x height), the
// JPEG reader's limit (kMaxJpegPixels) and checked as early: in the header,
// before anything is allocated. At the limit the output is 768 MiB, and an
// interlaced file of other than 8-bit RGB holds its raw samples too (up to
// 8 bytes a pixel).
inline constexpr int64_t kMaxPngPixels = int64_t{1} << 28;

// Whether `bytes` starts with PNG's 8-byte signature.
bool is_png(absl::string_view bytes);

struct PngHeader {
  int64_t height = 0;
  int64_t width = 0;
};

// Reads the chunks before the image data. Errors (kDataLoss) start with
// `name`, the file, and say what is wrong, as all errors here do.
absl::StatusOr<PngHeader> read_png_header(absl::string_view bytes, absl::string_view name,
                                          int64_t max_pixels = kMaxPngPixels);

// Decodes to u8 [H, W, 3] as Pillow's convert("RGB") does, which takes no
// part in transparency or color management: alpha is dropped (not
// composited), tRNS ignored, gamma and ICC chunks not applied; gray is
// replicated, 1-, 2- and 4-bit gray scaled to 0..255, a palette looked up
// (indices past its end black); 16-bit color takes each sample's high byte,
// and 16-bit gray, which Pillow opens as I;16, min(value, 255). Adam7
// interlacing is undone. Damage libpng notices (a file cut anywhere before
// IEND, a bad checksum in a critical chunk, IDAT's included, which Pillow
// does not check, a broken zlib stream, too little image data) is
// kDataLoss, never a partial image; its warnings (ancillary chunks it drops,
// data after the image) leave the pixels whole and pass. Memory that is not
// there is kResourceExhausted. Both name the file. Thread safe.
absl::StatusOr<Tensor> decode_png(absl::string_view bytes, absl::string_view name, int64_t max_pixels = kMaxPngPixels);

// The same into `out`, a contiguous CPU u8 [H, W, 3] of the image's size that
// the caller owns (a loader worker's reused buffer).
absl::Status decode_png_into(absl::string_view bytes, absl::string_view name, int64_t max_pixels, const Tensor& out);

}  // namespace ts::data
