#include "data/readers/jpeg_encode.h"

#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "data/readers/libjpeg_call.h"

namespace ts::data {
namespace {

// A compressor with its error handler, destroyed with it.
struct Compressor {
  jpeg_compress_struct cinfo;
  libjpeg::ErrorHandler error;
  bool created = false;

  Compressor() {
    cinfo.err = libjpeg::install(error);
    created = libjpeg::call(error, [&] { jpeg_create_compress(&cinfo); });
  }
  ~Compressor() {
    if (created) jpeg_destroy_compress(&cinfo);
  }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
};

struct FreeDeleter {
  void operator()(unsigned char* buffer) const { std::free(buffer); }
};

}  // namespace

absl::StatusOr<std::string> encode_jpeg(const Tensor& rgb, const JpegEncodeOptions& options) {
  if (!rgb.defined() || !rgb.device().is_cpu() || rgb.dtype() != DType::kU8 || rgb.dim() != 3 || rgb.size(2) != 3 ||
      !rgb.is_contiguous() || rgb.numel() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("encode_jpeg: expected a contiguous CPU u8 image [H, W, 3], got ",
                                                   rgb.defined() ? rgb.describe() : "undefined"));
  }
  if (options.quality < 1 || options.quality > 100) {
    return absl::InvalidArgumentError(absl::StrCat("encode_jpeg: quality ", options.quality, " is outside 1..100"));
  }
  // Compressors are cheap next to an encode and writers are not hot loops:
  // one per call keeps this free of thread-local state.
  Compressor c;
  if (!c.created) return absl::ResourceExhaustedError(absl::StrCat("jpeg_create_compress: ", c.error.message));
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const int64_t height = rgb.size(0), width = rgb.size(1);
  const uint8_t* pixels = rgb.data<uint8_t>();
  const int luma_sampling = options.subsampling == ChromaSubsampling::k420 ? 2 : 1;
  // The settings of TurboJPEG's tjCompress2, which wrote these files before
  // (the same bytes): its DCT choice by quality, Y sampled luma_sampling
  // times as often as Cb and Cr in each direction.
  const bool encoded = libjpeg::call(c.error, [&] {
    jpeg_mem_dest(&c.cinfo, &buffer, &size);
    c.cinfo.image_width = static_cast<JDIMENSION>(width);
    c.cinfo.image_height = static_cast<JDIMENSION>(height);
    c.cinfo.input_components = 3;
    c.cinfo.in_color_space = JCS_EXT_RGB;
    jpeg_set_defaults(&c.cinfo);
    jpeg_set_quality(&c.cinfo, options.quality, TRUE);
    c.cinfo.dct_method = options.quality >= 96 ? JDCT_ISLOW : JDCT_FASTEST;
    jpeg_set_colorspace(&c.cinfo, JCS_YCbCr);
    c.cinfo.comp_info[0].h_samp_factor = c.cinfo.comp_info[0].v_samp_factor = luma_sampling;
    for (int i = 1; i < 3; ++i) c.cinfo.comp_info[i].h_samp_factor = c.cinfo.comp_info[i].v_samp_factor = 1;
    jpeg_start_compress(&c.cinfo, TRUE);
    while (c.cinfo.next_scanline < c.cinfo.image_height) {
      JSAMPROW row = const_cast<uint8_t*>(pixels) + int64_t{c.cinfo.next_scanline} * width * 3;
      jpeg_write_scanlines(&c.cinfo, &row, 1);
    }
    jpeg_finish_compress(&c.cinfo);
  });
  // libjpeg allocated the buffer with malloc, also when the encode failed.
  const std::unique_ptr<unsigned char, FreeDeleter> owned(buffer);
  if (!encoded) return absl::InternalError(absl::StrCat("encode_jpeg: ", c.error.message));
  return std::string(reinterpret_cast<const char*>(buffer), size);
}

}  // namespace ts::data
