// bazel run //tools/corpus:build_gettext_corpus -- --out_dir=/tmp/gettext-de-en
// Writes {train,valid,test}.{en,de} from the German gettext catalogs.
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/corpus/gettext_corpus.h"

ABSL_FLAG(std::string, catalog_dir, "/usr/share/locale/de/LC_MESSAGES", "directory of .mo files");
ABSL_FLAG(std::string, out_dir, "", "where to write {train,valid,test}.{en,de} (required)");
ABSL_FLAG(double, valid_fraction, 0.05, "share of source sentences in valid, by hash");
ABSL_FLAG(double, test_fraction, 0.05, "share of source sentences in test, by hash");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Builds an English-German parallel corpus from gettext .mo catalogs.");
  absl::ParseCommandLine(argc, argv);
  ts::corpus::GettextCorpusOptions options;
  options.catalog_dir = absl::GetFlag(FLAGS_catalog_dir);
  options.out_dir = absl::GetFlag(FLAGS_out_dir);
  options.valid_fraction = absl::GetFlag(FLAGS_valid_fraction);
  options.test_fraction = absl::GetFlag(FLAGS_test_fraction);
  if (options.out_dir.empty()) {
    std::fprintf(stderr, "build_gettext_corpus: --out_dir is required\n");
    return 2;
  }
  const auto stats = ts::corpus::build_gettext_corpus(options);
  if (!stats.ok()) {
    std::fprintf(stderr, "build_gettext_corpus: %s\n", std::string(stats.status().message()).c_str());
    return 1;
  }
  std::printf("%lld catalogs, %lld entries -> %lld pairs: train %lld, valid %lld, test %lld in %s\n",
              static_cast<long long>(stats->files), static_cast<long long>(stats->entries),
              static_cast<long long>(stats->pairs), static_cast<long long>(stats->per_split[0]),
              static_cast<long long>(stats->per_split[1]), static_cast<long long>(stats->per_split[2]),
              options.out_dir.c_str());
  return 0;
}
