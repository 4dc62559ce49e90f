// Lines as Python's universal newlines reads them, for the text readers: a
// line ends at "\n", "\r\n" or "\r", and a final line break does not start
// another line.
#pragma once

#include <algorithm>
#include <cstddef>

#include "absl/strings/string_view.h"

namespace ts::data {

// Calls line(text of the line, without its break) for each line of `text`.
template <typename Line>
void for_each_line(absl::string_view text, Line line) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = std::min(text.find_first_of("\r\n", i), text.size());
    line(text.substr(i, end - i));
    i = end + (text.substr(end, 2) == "\r\n" ? 2 : 1);
  }
}

}  // namespace ts::data
