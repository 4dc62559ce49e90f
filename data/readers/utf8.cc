#include "data/readers/utf8.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace ts::data {

size_t utf8_sequence_length(absl::string_view text) {
  if (text.empty()) return 0;
  const auto* u = reinterpret_cast<const unsigned char*>(text.data());
  if (u[0] < 0x80) return 1;
  size_t length;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (u[0] >= 0xC2 && u[0] <= 0xDF) {
    length = 2;
  } else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
    length = 3;
    if (u[0] == 0xE0) lo = 0xA0;  // overlong
    if (u[0] == 0xED) hi = 0x9F;  // surrogates
  } else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
    length = 4;
    if (u[0] == 0xF0) lo = 0x90;  // overlong
    if (u[0] == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < length || u[1] < lo || u[1] > hi) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (u[i] < 0x80 || u[i] > 0xBF) return 0;
  }
  return length;
}

absl::Status check_utf8(absl::string_view text, absl::string_view name) {
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = text[i];
    if (c < 0x80) {
      // Lines end as the readers split them (lines.h): at \n, \r\n or a lone \r.
      if (c == '\n' || (c == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) {
        ++line;
        line_start = i + 1;
      }
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(text.substr(i));
    if (length == 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d:%d: invalid UTF-8 byte 0x%02x", name, line, i - line_start + 1, c));
    }
    i += length;
  }
  return absl::OkStatus();
}

std::vector<std::string> utf8_characters(absl::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const size_t length = std::max<size_t>(1, utf8_sequence_length(text.substr(i)));
    out.emplace_back(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace ts::data
