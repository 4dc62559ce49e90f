// Test support for the readers: files in the test's temp dir, gzip, and
// writers of the binary formats (IDX, .mo) so tests build good and broken
// inputs byte by byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ts::data::testing {

// A path in the test's temp dir (TEST_TMPDIR).
std::string temp_path(absl::string_view name);
// Writes bytes to temp_path(name) and returns the path (fatal on failure).
std::string write_temp(absl::string_view name, absl::string_view bytes);

// gzip-compresses bytes (one member).
std::string gzip(absl::string_view bytes);

// An IDX file: magic 0x0000TTRR, big-endian dims, then `data` as given.
std::string idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, absl::string_view data);

struct MoMessage {
  std::string original;     // "ctx\x04id" or "id\0plural" as stored in the file
  std::string translation;  // forms joined by '\0'
};
// A .mo file in the given byte order, revision 0, without a hash table.
std::string mo_bytes(const std::vector<MoMessage>& messages, bool big_endian = false);

}  // namespace ts::data::testing
