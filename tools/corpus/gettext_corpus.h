// Builds an English-German parallel corpus from gettext catalogs (.mo files):
// the msgid/msgstr pairs, cleaned, deduplicated and split by source hash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/readers/mo_file.h"

namespace ts::corpus {

struct GettextCorpusOptions {
  std::string catalog_dir = "/usr/share/locale/de/LC_MESSAGES";
  std::string out_dir;
  double valid_fraction = 0.05;
  double test_fraction = 0.05;
};

struct SentencePair {
  std::string source, target;
};

// The usable pairs of one catalog's entries, cleaned: the header entry (empty
// msgid) and untranslated entries are dropped; plural entries give the
// singular msgid with the first form; both sides get whitespace normalized
// and accelerators stripped (strip_accelerators); pairs whose source has no
// letter (format strings like "%s: %s") or whose two sides are equal
// (untranslated copies) are dropped.
std::vector<SentencePair> clean_pairs(const std::vector<data::MoEntry>& entries);

struct GettextCorpusStats {
  int64_t files = 0;
  int64_t entries = 0;               // in all catalogs, header entries included
  int64_t pairs = 0;                 // after cleaning and deduplication
  int64_t per_split[3] = {0, 0, 0};  // train, valid, test
};

// Reads every *.mo in catalog_dir (sorted by name), keeps the first copy of
// each (source, target) pair, and writes {train,valid,test}.{en,de} to
// out_dir, one sentence per line, in order of first appearance.
absl::StatusOr<GettextCorpusStats> build_gettext_corpus(const GettextCorpusOptions& options);

}  // namespace ts::corpus
