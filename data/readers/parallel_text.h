// Line-aligned parallel text for translation (one sentence per line in a
// source and a target file, as WMT releases are preprocessed).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts::data {

struct ParallelCorpus {
  std::vector<std::string> source, target;  // source[i] translates to target[i]
};

// Splits both texts into lines as MLBench's Python reads them (lines.h: a
// line ends at \n, \r\n or \r). Unequal line counts or bad UTF-8 are errors
// naming the file.
absl::StatusOr<ParallelCorpus> parse_parallel(absl::string_view source_text, absl::string_view source_name,
                                              absl::string_view target_text, absl::string_view target_name);
absl::StatusOr<ParallelCorpus> read_parallel(const std::string& source_path, const std::string& target_path);

// The lines of `text` as above (shared with the corpus tools).
std::vector<std::string> split_lines(absl::string_view text);

}  // namespace ts::data
