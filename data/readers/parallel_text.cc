#include "data/readers/parallel_text.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/readers/file_io.h"
#include "data/readers/lines.h"
#include "data/readers/utf8.h"

namespace ts::data {

std::vector<std::string> split_lines(absl::string_view text) {
  std::vector<std::string> lines;
  for_each_line(text, [&](absl::string_view line) { lines.emplace_back(line); });
  return lines;
}

absl::StatusOr<ParallelCorpus> parse_parallel(absl::string_view source_text, absl::string_view source_name,
                                              absl::string_view target_text, absl::string_view target_name) {
  RETURN_IF_ERROR(check_utf8(source_text, source_name));
  RETURN_IF_ERROR(check_utf8(target_text, target_name));
  ParallelCorpus corpus{split_lines(source_text), split_lines(target_text)};
  if (corpus.source.size() != corpus.target.size()) {
    return absl::InvalidArgumentError(absl::StrCat("parallel text is not aligned: ", source_name, " has ",
                                                   corpus.source.size(), " lines, ", target_name, " has ",
                                                   corpus.target.size()));
  }
  if (corpus.source.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, " and ", target_name, ": no sentence pairs (empty files)"));
  }
  return corpus;
}

absl::StatusOr<ParallelCorpus> read_parallel(const std::string& source_path, const std::string& target_path) {
  ASSIGN_OR_RETURN(const std::string source, read_inflated(source_path));
  ASSIGN_OR_RETURN(const std::string target, read_inflated(target_path));
  return parse_parallel(source, source_path, target, target_path);
}

}  // namespace ts::data
