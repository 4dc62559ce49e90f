#include "tools/corpus/fortune_corpus.h"

#include <algorithm>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "data/readers/file_io.h"
#include "data/readers/utf8.h"
#include "tools/corpus/text_clean.h"

namespace ts::corpus {
namespace {

bool is_leading_punct(char c) { return c == '(' || c == '[' || c == '"' || c == '\''; }
bool is_trailing_punct(char c) {
  return c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?' || c == ')' || c == ']' || c == '"' ||
         c == '\'';
}

}  // namespace

std::vector<std::string> split_fortunes(absl::string_view text) {
  std::vector<std::string> entries;
  std::string current;
  auto flush = [&] {
    if (!normalize_whitespace(current).empty()) entries.push_back(std::move(current));
    current.clear();
  };
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line == "%") {
      flush();
      continue;
    }
    absl::StrAppend(&current, current.empty() ? "" : "\n", line);
  }
  flush();
  return entries;
}

std::string wikitext_line(absl::string_view entry) {
  const std::string text = normalize_whitespace(entry);
  std::string out;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    std::vector<char> tail;
    while (!word.empty() && is_leading_punct(word.front())) {
      absl::StrAppend(&out, out.empty() ? "" : " ", word.substr(0, 1));
      word.remove_prefix(1);
    }
    while (!word.empty() && is_trailing_punct(word.back())) {
      tail.push_back(word.back());
      word.remove_suffix(1);
    }
    if (!word.empty()) absl::StrAppend(&out, out.empty() ? "" : " ", word);
    for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
      absl::StrAppend(&out, out.empty() ? "" : " ", absl::string_view(&*it, 1));
    }
  }
  return out;
}

absl::StatusOr<FortuneCorpus> make_fortune_corpus(const FortuneCorpusOptions& options) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(options.fortune_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.is_symlink() || entry.path().extension() == ".dat" ||
        entry.path().extension() == ".u8" ||
        std::find(options.exclude.begin(), options.exclude.end(), name) != options.exclude.end()) {
      continue;
    }
    files.push_back(entry.path());
  }
  if (ec) return absl::NotFoundError(absl::StrCat(options.fortune_dir, ": cannot list: ", ec.message()));
  if (files.empty()) return absl::NotFoundError(absl::StrCat(options.fortune_dir, ": no fortune files"));
  std::sort(files.begin(), files.end());

  FortuneCorpus corpus;
  FortuneCorpusStats& stats = corpus.stats;
  absl::flat_hash_set<std::string> seen;
  for (const auto& file : files) {
    ASSIGN_OR_RETURN(const std::string text, data::read_inflated(file.string()));
    ++stats.files;
    for (const std::string& entry : split_fortunes(text)) {
      ++stats.entries;
      if (!data::check_utf8(entry, file.string()).ok()) {
        ++stats.invalid_utf8;
        continue;
      }
      std::string line = wikitext_line(entry);
      if (line.empty() || !seen.insert(line).second) continue;
      const int split = static_cast<int>(split_of(line, options.valid_fraction, options.test_fraction));
      absl::StrAppend(&corpus.splits[split], line, "\n");
      ++stats.per_split[split];
      ++stats.paragraphs;
    }
  }
  return corpus;
}

absl::StatusOr<FortuneCorpusStats> build_fortune_corpus(const FortuneCorpusOptions& options) {
  ASSIGN_OR_RETURN(const FortuneCorpus corpus, make_fortune_corpus(options));
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(options.out_dir, ": cannot create: ", ec.message()));
  for (Split split : {Split::kTrain, Split::kValid, Split::kTest}) {
    RETURN_IF_ERROR(write_file_atomically(absl::StrCat(options.out_dir, "/", split_name(split), ".txt"),
                                          corpus.splits[static_cast<int>(split)]));
  }
  return corpus.stats;
}

}  // namespace ts::corpus
