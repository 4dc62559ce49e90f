// JPEG decoding with libjpeg-turbo (its libjpeg API) to 8-bit RGB, pixel
// for pixel what Pillow's Image.open(f).convert("RGB") gives: accurate
// integer DCT and fancy (smooth) chroma upsampling, the libjpeg defaults both
// use. A decode may also run at a reduced DCT scale (1/2, 1/4, 1/8: the
// inverse DCT makes fewer output pixels per block, so the decode costs less),
// as DALI and other fast loaders do for an image about to be downscaled.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace ts::data {

// The largest image decode_jpeg accepts by default (width x height): 16384 x
// 16384, far above any photo data set, checked in the header before
// anything is allocated. It bounds, not removes, what a crafted header can
// make a decode allocate: at the limit, 768 MiB of RGB output and, for a
// file of several scans (progressive), libjpeg's buffer of all its
// coefficients, 2 bytes a sample (768 MiB for 4:2:0 color, 1.5 GiB for
// 4:4:4, 2 GiB for CMYK). Memory that is not there is an error naming the
// file (kResourceExhausted); lower max_pixels where workers have less.
inline constexpr int64_t kMaxJpegPixels = int64_t{1} << 28;

enum class JpegColor { kGray, kColor, kCmyk };

// What the frame header says.
struct JpegHeader {
  int64_t height = 0;
  int64_t width = 0;
  JpegColor color = JpegColor::kColor;
};

// Reads the headers only (cheap: no entropy decoding). Errors (kDataLoss)
// start with `name`, the file, and say what is wrong, as all errors here do.
// (A PNG is read by png.h; data/transforms/jpeg_pipeline tells them apart.)
absl::StatusOr<JpegHeader> read_jpeg_header(absl::string_view bytes, absl::string_view name,
                                            int64_t max_pixels = kMaxJpegPixels);

// libjpeg's size of a dimension decoded at scale 1/denominator (rounded up),
// as Pillow's draft() computes it.
inline int64_t jpeg_scaled_size(int64_t size, int denominator) { return (size + denominator - 1) / denominator; }

// The largest denominator in {8, 4, 2, 1} whose scaled decode still has at
// least min_height rows and min_width columns: the cheapest decode that
// leaves a following downscale to that size a downscale.
int jpeg_scale_denominator(int64_t height, int64_t width, int64_t min_height, int64_t min_width);

struct JpegDecodeOptions {
  int scale_denominator = 1;  // 1, 2, 4 or 8
  int64_t max_pixels = kMaxJpegPixels;
};

// Decodes to u8 [H, W, 3] (interleaved RGB, the decoder's own layout; H and W
// scaled by the options). Grayscale is replicated into the three channels;
// CMYK (and YCCK) is taken as Adobe's inverted CMYK and converted as Pillow's
// convert("RGB") does (R = (255 - C) * (255 - K) / 255 in its rounding), so
// it matches Pillow too. Damage that libjpeg notices is an error, never a
// partial image: its warnings of damaged or missing entropy-coded data
// ("premature end of data segment", a bad Huffman code), which Pillow
// passes over, count as errors, but for those that leave the image data
// whole (bytes skipped between segments, an unknown JFIF version, a
// sequential scan's unused progressive fields, an unknown Adobe transform
// code: jpeg.cc lists them), and which excuse no other warning. Damage it
// does not notice (a changed byte in the entropy-coded data that still
// decodes) gives a garbled image, as in Pillow. A progressive file of more
// than 500 scans is refused. Errors: kDataLoss for the file's content,
// kResourceExhausted when the memory a decode needs is not there (see
// kMaxJpegPixels), both naming the file. Thread safe: each thread uses a
// decompressor of its own.
absl::StatusOr<Tensor> decode_jpeg(absl::string_view bytes, absl::string_view name,
                                   const JpegDecodeOptions& options = {});

// The same into `out`, a contiguous CPU u8 [H, W, 3] of the decoded size that
// the caller owns: a loader worker reuses one buffer, as a fresh
// half-megabyte allocation per image faults in each of its pages (a fifth of
// the fused pipeline's time on 500x375 images).
absl::Status decode_jpeg_into(absl::string_view bytes, absl::string_view name, const JpegDecodeOptions& options,
                              const Tensor& out);

}  // namespace ts::data
