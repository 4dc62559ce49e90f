#include "tasks/common/tfrecord.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/crc32c.h"

namespace ts::tasks {
namespace {

// TFRecord fixes little-endian byte order whatever the host's.
void put_le(uint64_t v, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint64_t get_le(absl::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
  return v;
}

}  // namespace

void append_tfrecord(absl::string_view data, std::string& out) {
  std::string length;
  put_le(data.size(), 8, length);
  out += length;
  put_le(mask_crc(crc32c(length)), 4, out);
  out.append(data.data(), data.size());
  put_le(mask_crc(crc32c(data)), 4, out);
}

absl::StatusOr<std::vector<std::string>> read_tfrecords(absl::string_view bytes, absl::string_view name) {
  std::vector<std::string> records;
  size_t at = 0;
  while (at < bytes.size()) {
    const auto where = [&] { return absl::StrCat(name, ": record ", records.size(), " at byte ", at); };
    if (bytes.size() - at < 12) return absl::DataLossError(absl::StrCat(where(), ": truncated header"));
    const uint64_t length = get_le(bytes, at, 8);
    if (mask_crc(crc32c(bytes.substr(at, 8))) != get_le(bytes, at + 8, 4)) {
      return absl::DataLossError(absl::StrCat(where(), ": length CRC mismatch"));
    }
    if (bytes.size() - at - 12 < length || bytes.size() - at - 12 - length < 4) {
      return absl::DataLossError(absl::StrCat(where(), ": truncated data (", length, " bytes announced)"));
    }
    const absl::string_view data = bytes.substr(at + 12, length);
    if (mask_crc(crc32c(data)) != get_le(bytes, at + 12 + length, 4)) {
      return absl::DataLossError(absl::StrCat(where(), ": data CRC mismatch"));
    }
    records.emplace_back(data);
    at += 12 + length + 4;
  }
  return records;
}

}  // namespace ts::tasks
