// PNG decoding and the fused train and eval pipelines (which take a PNG by
// its signature) on arbitrary bytes. Images above 2^22 pixels stop at the
// header check, as a crafted header of 16384x16384 would allocate 768 MiB.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "data/readers/png.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/image_pipeline_check.h"

namespace {

constexpr int64_t kMaxPixels = int64_t{1} << 22;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto header = ts::data::read_png_header(bytes, "fuzz", kMaxPixels);
  if (!header.ok()) {
    ts::fuzz::check_named_error(header.status());
    return 0;
  }
  FUZZ_CHECK(ts::data::is_png(bytes));
  FUZZ_CHECK(header->height >= 1 && header->width >= 1 && header->height * header->width <= kMaxPixels);
  const auto rgb = ts::data::decode_png(bytes, "fuzz", kMaxPixels);
  if (!rgb.ok()) {
    ts::fuzz::check_named_error(rgb.status());
  } else {
    FUZZ_CHECK(rgb->dim() == 3 && rgb->size(0) == header->height && rgb->size(1) == header->width && rgb->size(2) == 3);
  }
  ts::fuzz::check_pipelines(bytes);
  return 0;
}
