#include "tools/corpus/gettext_corpus.h"

#include <filesystem>
#include <string>

#include "base/files.h"
#include "data/readers/parallel_text.h"
#include "gtest/gtest.h"
#include "tests/data/readers/test_files.h"
#include "tests/tensor/testing.h"
#include "tools/corpus/text_clean.h"

namespace ts::corpus {
namespace {

using ::ts::data::testing::mo_bytes;
using ::ts::data::testing::temp_path;
using ::ts::data::testing::write_temp;
using ::ts::testing::expect_error;

TEST(GettextCorpusTest, CleansPairs) {
  std::vector<data::MoEntry> entries = {
      {"", "", "", {"Content-Type: text/plain; charset=UTF-8\n"}},  // header
      {"", "&Open File", "", {"Datei \xc3\xb6&ffnen"}},
      {"menu", "_Quit", "", {"_Beenden"}},
      {"", "%d file", "%d files", {"%d Datei", "%d Dateien"}},
      {"", "Untranslated", "", {""}},
      {"", "%s: %s", "", {"%s = %s"}},
      {"", "OK", "", {"OK"}},
      {"", "Multi\nline\ttext ", "", {" Mehrzeiliger\n Text"}},
      {"", "bad", "", {"\xff"}},
  };
  const std::vector<SentencePair> pairs = clean_pairs(entries);
  ASSERT_EQ(pairs.size(), 4u);
  EXPECT_EQ(pairs[0].source, "Open File");
  EXPECT_EQ(pairs[0].target,
            "Datei \xc3\xb6"
            "ffnen");
  EXPECT_EQ(pairs[1].source, "Quit");
  EXPECT_EQ(pairs[1].target, "Beenden");
  EXPECT_EQ(pairs[2].source, "%d file");
  EXPECT_EQ(pairs[2].target, "%d Datei");
  EXPECT_EQ(pairs[3].source, "Multi line text");
  EXPECT_EQ(pairs[3].target, "Mehrzeiliger Text");
}

TEST(GettextCorpusTest, BuildsDedupedSplitFilesFromCatalogs) {
  const std::string dir = temp_path("catalogs");
  std::filesystem::create_directories(dir);
  std::vector<data::testing::MoMessage> a = {{"", "header"},
                                             {"Open",
                                              "\xc3\x96"
                                              "ffnen"},
                                             {"Close",
                                              "Schlie\xc3\x9f"
                                              "en"}};
  std::vector<data::testing::MoMessage> b = {{"Open",
                                              "\xc3\x96"
                                              "ffnen"},
                                             {"Save", "Speichern"}};
  for (int i = 0; i < 200; ++i) b.push_back({"Item " + std::to_string(i), "Eintrag " + std::to_string(i)});
  ASSERT_OK(write_file_atomically(dir + "/a.mo", mo_bytes(a)));
  ASSERT_OK(write_file_atomically(dir + "/b.mo", mo_bytes(b, /*big_endian=*/true)));
  ASSERT_OK(write_file_atomically(dir + "/notes.txt", "not a catalog"));

  GettextCorpusOptions options{dir, temp_path("out"), 0.2, 0.1};
  ASSERT_OK_AND_ASSIGN(GettextCorpusStats stats, build_gettext_corpus(options));
  EXPECT_EQ(stats.files, 2);
  EXPECT_EQ(stats.entries, 3 + 202);
  EXPECT_EQ(stats.pairs, 203);  // "Open" once
  EXPECT_EQ(stats.per_split[0] + stats.per_split[1] + stats.per_split[2], 203);
  EXPECT_GT(stats.per_split[1], 0);
  EXPECT_GT(stats.per_split[2], 0);
  int64_t total = 0;
  for (Split split : {Split::kTrain, Split::kValid, Split::kTest}) {
    const std::string base = options.out_dir + "/" + split_name(split);
    ASSERT_OK_AND_ASSIGN(data::ParallelCorpus c, data::read_parallel(base + ".en", base + ".de"));
    EXPECT_EQ(static_cast<int64_t>(c.source.size()), stats.per_split[static_cast<int>(split)]);
    for (const std::string& s : c.source) EXPECT_EQ(split_of(s, 0.2, 0.1), split) << s;
    total += c.source.size();
  }
  EXPECT_EQ(total, 203);
  // Deterministic: a rebuild writes the same bytes.
  ASSERT_OK_AND_ASSIGN(std::string first, read_file(options.out_dir + "/train.de"));
  ASSERT_OK(build_gettext_corpus(options).status());
  ASSERT_OK_AND_ASSIGN(std::string second, read_file(options.out_dir + "/train.de"));
  EXPECT_EQ(first, second);
}

TEST(GettextCorpusTest, ErrorsNameTheDirectoryOrFile) {
  expect_error(build_gettext_corpus({"/nonexistent/dir", temp_path("o1")}).status(), absl::StatusCode::kNotFound,
               {"/nonexistent/dir"});
  const std::string empty = temp_path("no-catalogs");
  std::filesystem::create_directories(empty);
  expect_error(build_gettext_corpus({empty, temp_path("o2")}).status(), absl::StatusCode::kNotFound,
               {empty, "no .mo files"});
  const std::string broken = temp_path("broken");
  std::filesystem::create_directories(broken);
  ASSERT_OK(write_file_atomically(broken + "/x.mo", "not a mo file at all, long enough"));
  expect_error(build_gettext_corpus({broken, temp_path("o3")}).status(), absl::StatusCode::kInvalidArgument,
               {broken + "/x.mo", "bad magic"});
}

TEST(GettextCorpusTest, RealGermanCatalogs) {
  const std::string dir = "/usr/share/locale/de/LC_MESSAGES";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no German catalogs in " << dir;
  auto stats = build_gettext_corpus({dir, temp_path("real")});
  if (!stats.ok() && stats.status().code() == absl::StatusCode::kNotFound) GTEST_SKIP() << stats.status();
  ASSERT_OK(stats.status());
  EXPECT_GT(stats->pairs, 100);
  EXPECT_GT(stats->per_split[1], 0);
  EXPECT_GT(stats->per_split[2], 0);
}

}  // namespace
}  // namespace ts::corpus
