// IDX parser and image-set checks. Input: 2 bytes (little-endian) of split
// offset, then the images file and the labels file; either may be gzip'd.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "data/readers/file_io.h"
#include "data/readers/idx.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// A gzip'd part is inflated (capped, as a crafted stream could claim
// gigabytes); a part that fails to inflate is used as it is.
std::string maybe_inflate(absl::string_view part) {
  if (!ts::data::is_gzip(part)) return std::string(part);
  auto inflated = ts::data::gunzip(part, "fuzz", 1 << 22);
  return inflated.ok() ? *std::move(inflated) : std::string(part);
}

int64_t element_size(ts::data::IdxType type) {
  switch (type) {
    case ts::data::IdxType::kU8:
    case ts::data::IdxType::kI8:
      return 1;
    case ts::data::IdxType::kI16:
      return 2;
    case ts::data::IdxType::kI32:
    case ts::data::IdxType::kF32:
      return 4;
    case ts::data::IdxType::kF64:
      return 8;
  }
  return 0;
}

void check_array(absl::string_view bytes) {
  auto array = ts::data::parse_idx(bytes, "fuzz");
  if (!array.ok()) {
    FUZZ_CHECK(absl::StrContains(array.status().message(), "fuzz"));
    return;
  }
  FUZZ_CHECK(array->dims.size() >= 1 && array->dims.size() <= 8);
  // Accepted dims multiply to at most the input size, unless one is 0; then
  // an unsigned product may wrap on the way but still ends at 0.
  uint64_t bytes_needed = element_size(array->type);
  for (int64_t d : array->dims) bytes_needed *= static_cast<uint64_t>(d);
  FUZZ_CHECK(bytes_needed == array->data.size());
  FUZZ_CHECK(array->data.data() + array->data.size() == bytes.data() + bytes.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t split = 2 + (data[0] | (data[1] << 8)) % (size - 1);
  const absl::string_view all(reinterpret_cast<const char*>(data), size);
  const std::string images = maybe_inflate(all.substr(2, split - 2));
  const std::string labels = maybe_inflate(all.substr(split));
  check_array(images);
  check_array(labels);
  auto set = ts::data::parse_idx_image_set(images, "images", labels, "labels");
  if (set.ok()) {
    FUZZ_CHECK(set->images.dim() == 4 && set->images.size(1) == 1);
    FUZZ_CHECK(set->images.size(0) == set->labels.numel());
    const int64_t* l = set->labels.data<int64_t>();
    for (int64_t i = 0; i < set->labels.numel(); ++i) FUZZ_CHECK(l[i] >= 0 && l[i] < 10);
  }
  return 0;
}
