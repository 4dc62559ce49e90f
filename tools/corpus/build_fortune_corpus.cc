// bazel run //tools/corpus:build_fortune_corpus -- --out_dir=/tmp/fortunes
// Writes {train,valid,test}.txt (WikiText-like) from Debian's fortunes.
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/corpus/fortune_corpus.h"

ABSL_FLAG(std::string, fortune_dir, "/usr/share/games/fortunes", "directory of fortune files");
ABSL_FLAG(std::string, out_dir, "", "where to write {train,valid,test}.txt (required)");
ABSL_FLAG(std::vector<std::string>, exclude, std::vector<std::string>({"art", "ascii-art"}),
          "fortune files to leave out (pictures, not prose)");
ABSL_FLAG(double, valid_fraction, 0.05, "share of paragraphs in valid, by hash");
ABSL_FLAG(double, test_fraction, 0.05, "share of paragraphs in test, by hash");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Builds an English prose corpus from Debian's fortunes.");
  absl::ParseCommandLine(argc, argv);
  ts::corpus::FortuneCorpusOptions options;
  options.fortune_dir = absl::GetFlag(FLAGS_fortune_dir);
  options.out_dir = absl::GetFlag(FLAGS_out_dir);
  options.exclude = absl::GetFlag(FLAGS_exclude);
  options.valid_fraction = absl::GetFlag(FLAGS_valid_fraction);
  options.test_fraction = absl::GetFlag(FLAGS_test_fraction);
  if (options.out_dir.empty()) {
    std::fprintf(stderr, "build_fortune_corpus: --out_dir is required\n");
    return 2;
  }
  const auto stats = ts::corpus::build_fortune_corpus(options);
  if (!stats.ok()) {
    std::fprintf(stderr, "build_fortune_corpus: %s\n", std::string(stats.status().message()).c_str());
    return 1;
  }
  std::printf(
      "%lld files, %lld entries (%lld with bad UTF-8 left out) -> %lld paragraphs: "
      "train %lld, valid %lld, test %lld in %s\n",
      static_cast<long long>(stats->files), static_cast<long long>(stats->entries),
      static_cast<long long>(stats->invalid_utf8), static_cast<long long>(stats->paragraphs),
      static_cast<long long>(stats->per_split[0]), static_cast<long long>(stats->per_split[1]),
      static_cast<long long>(stats->per_split[2]), options.out_dir.c_str());
  return 0;
}
