// JPEG decoding (full and 1/8 scale) and the fused train and eval pipelines
// on arbitrary bytes. Images above 2^22 pixels stop at the header check, as
// a progressive decode of a crafted 16384x16384 header would hold gigabytes.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "data/readers/jpeg.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/image_pipeline_check.h"

namespace {

constexpr int64_t kMaxPixels = int64_t{1} << 22;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto header = ts::data::read_jpeg_header(bytes, "fuzz", kMaxPixels);
  if (!header.ok()) {
    ts::fuzz::check_named_error(header.status());
    return 0;
  }
  FUZZ_CHECK(header->height >= 1 && header->width >= 1 && header->height * header->width <= kMaxPixels);
  for (int denominator : {1, 8}) {
    ts::data::JpegDecodeOptions options;
    options.scale_denominator = denominator;
    options.max_pixels = kMaxPixels;
    const auto rgb = ts::data::decode_jpeg(bytes, "fuzz", options);
    if (!rgb.ok()) {
      ts::fuzz::check_named_error(rgb.status());
      continue;
    }
    FUZZ_CHECK(rgb->dim() == 3 && rgb->size(2) == 3);
    FUZZ_CHECK(rgb->size(0) == ts::data::jpeg_scaled_size(header->height, denominator));
    FUZZ_CHECK(rgb->size(1) == ts::data::jpeg_scaled_size(header->width, denominator));
  }
  ts::fuzz::check_pipelines(bytes);
  return 0;
}
