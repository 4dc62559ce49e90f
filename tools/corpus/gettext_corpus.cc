#include "tools/corpus/gettext_corpus.h"

#include <algorithm>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "data/readers/utf8.h"
#include "tools/corpus/text_clean.h"

namespace ts::corpus {

std::vector<SentencePair> clean_pairs(const std::vector<data::MoEntry>& entries) {
  std::vector<SentencePair> pairs;
  for (const data::MoEntry& e : entries) {
    if (e.msgid.empty() || e.msgstr.empty() || e.msgstr[0].empty()) continue;
    SentencePair p{strip_accelerators(normalize_whitespace(e.msgid)),
                   strip_accelerators(normalize_whitespace(e.msgstr[0]))};
    if (p.source.empty() || p.target.empty() || !has_letter(p.source) || p.source == p.target) continue;
    // Catalogs declare their charset; a pair that is not UTF-8 (a legacy
    // Latin-1 catalog) would poison the corpus, so it is left out.
    if (!data::check_utf8(p.source, "").ok() || !data::check_utf8(p.target, "").ok()) continue;
    pairs.push_back(std::move(p));
  }
  return pairs;
}

absl::StatusOr<GettextCorpusStats> build_gettext_corpus(const GettextCorpusOptions& options) {
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(options.catalog_dir, ec)) {
    if (entry.path().extension() == ".mo") files.push_back(entry.path().string());
  }
  if (ec) return absl::NotFoundError(absl::StrCat(options.catalog_dir, ": cannot list: ", ec.message()));
  if (files.empty()) return absl::NotFoundError(absl::StrCat(options.catalog_dir, ": no .mo files"));
  std::sort(files.begin(), files.end());

  GettextCorpusStats stats;
  std::string source_out[3], target_out[3];
  absl::flat_hash_set<std::string> seen;
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(const std::vector<data::MoEntry> entries, data::read_mo(file));
    ++stats.files;
    stats.entries += entries.size();
    for (SentencePair& p : clean_pairs(entries)) {
      if (!seen.insert(absl::StrCat(p.source, "\t", p.target)).second) continue;
      const int split = static_cast<int>(split_of(p.source, options.valid_fraction, options.test_fraction));
      absl::StrAppend(&source_out[split], p.source, "\n");
      absl::StrAppend(&target_out[split], p.target, "\n");
      ++stats.per_split[split];
      ++stats.pairs;
    }
  }
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat(options.out_dir, ": cannot create: ", ec.message()));
  for (Split split : {Split::kTrain, Split::kValid, Split::kTest}) {
    const int s = static_cast<int>(split);
    const std::string base = absl::StrCat(options.out_dir, "/", split_name(split));
    RETURN_IF_ERROR(write_file_atomically(base + ".en", source_out[s]));
    RETURN_IF_ERROR(write_file_atomically(base + ".de", target_out[s]));
  }
  return stats;
}

}  // namespace ts::corpus
