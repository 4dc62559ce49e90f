// Builds an English prose corpus from Debian's fortunes (files of entries
// separated by lines holding only '%') in WikiText-like form: one entry per
// line, punctuation split from words, split by hash into train/valid/test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts::corpus {

struct FortuneCorpusOptions {
  std::string fortune_dir = "/usr/share/games/fortunes";
  std::string out_dir;
  // Files of pictures rather than prose.
  std::vector<std::string> exclude = {"art", "ascii-art"};
  double valid_fraction = 0.05;
  double test_fraction = 0.05;
};

// The entries of a fortune file's text, each as its raw lines.
std::vector<std::string> split_fortunes(absl::string_view text);

// One entry as one WikiText-like line: whitespace normalized, and the
// punctuation at the edges of each word ( ( [ " ' before, . , ; : ! ? ) ] " '
// after) split off as tokens of their own ("Hello, world!" -> "Hello , world !").
std::string wikitext_line(absl::string_view entry);

struct FortuneCorpusStats {
  int64_t files = 0;
  int64_t entries = 0;       // in all files read
  int64_t invalid_utf8 = 0;  // entries left out for bad UTF-8
  int64_t paragraphs = 0;    // after deduplication
  int64_t per_split[3] = {0, 0, 0};
};

struct FortuneCorpus {
  std::string splits[3];  // train, valid, test: one WikiText-like line per paragraph
  FortuneCorpusStats stats;
};

// Reads every fortune file in fortune_dir (sorted; *.dat index files, *.u8
// links, subdirectories and `exclude` skipped) into the three splits, in
// memory (out_dir is not used): what a task reads as its default data.
absl::StatusOr<FortuneCorpus> make_fortune_corpus(const FortuneCorpusOptions& options);
// The same, written to out_dir as {train,valid,test}.txt.
absl::StatusOr<FortuneCorpusStats> build_fortune_corpus(const FortuneCorpusOptions& options);

}  // namespace ts::corpus
