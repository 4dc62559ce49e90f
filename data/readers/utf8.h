// UTF-8 validation and code-point splitting for the text readers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ts::data {

// Length of the well-formed UTF-8 sequence at the start of `text` (RFC 3629:
// no overlongs, no surrogates, at most U+10FFFF), or 0 if there is none.
size_t utf8_sequence_length(absl::string_view text);

// OK, or "name:line:column: invalid UTF-8 byte 0x.." for the first bad byte
// (line and column 1-based; the column counts bytes).
absl::Status check_utf8(absl::string_view text, absl::string_view name);

// The code points of valid UTF-8 text, each as its own string.
std::vector<std::string> utf8_characters(absl::string_view text);

}  // namespace ts::data
