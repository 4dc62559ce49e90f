#include "tools/corpus/fortune_corpus.h"

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

using ::ts::data::testing::temp_path;
using ::ts::testing::expect_error;

TEST(FortuneCorpusTest, SplitsEntriesOnPercentLines) {
  EXPECT_EQ(split_fortunes("one\nline\n%\ntwo\n%\n%\n  \n%\nthree"),
            (std::vector<std::string>{"one\nline", "two", "three"}));
  EXPECT_TRUE(split_fortunes("").empty());
}

TEST(FortuneCorpusTest, WikitextLineSplitsEdgePunctuation) {
  EXPECT_EQ(wikitext_line("Hello,   world!\n\t-- \"Someone\" (2001)."), "Hello , world ! -- \" Someone \" ( 2001 ) .");
  EXPECT_EQ(wikitext_line("don't stop: e.g. 3.14"), "don't stop : e.g . 3.14");
  EXPECT_EQ(wikitext_line("..."), ". . .");
  EXPECT_EQ(wikitext_line(" \n "), "");
}

TEST(FortuneCorpusTest, BuildsSplitsSkippingIndexesLinksAndExcludedFiles) {
  const std::string dir = temp_path("fortunes");
  std::filesystem::create_directories(dir + "/off");
  std::string prose;
  for (int i = 0; i < 300; ++i) prose += "Fortune number " + std::to_string(i) + ", said he.\n%\n";
  prose += "Fortune number 0, said he.\n%\n";  // a duplicate
  prose += "bad \xff byte\n";
  ASSERT_OK(write_file_atomically(dir + "/prose", prose));
  ASSERT_OK(write_file_atomically(dir + "/prose.dat", "\x01\x02 index"));
  std::filesystem::create_symlink("prose", dir + "/prose.u8");
  ASSERT_OK(write_file_atomically(dir + "/art", "  /\\_/\\\n ( o.o )\n%\n"));
  ASSERT_OK(write_file_atomically(dir + "/off/rude", "hidden\n"));

  FortuneCorpusOptions options{dir, temp_path("fortune-out")};
  ASSERT_OK_AND_ASSIGN(FortuneCorpusStats stats, build_fortune_corpus(options));
  EXPECT_EQ(stats.files, 1);
  EXPECT_EQ(stats.entries, 302);
  EXPECT_EQ(stats.invalid_utf8, 1);
  EXPECT_EQ(stats.paragraphs, 300);
  int64_t total = 0;
  for (Split split : {Split::kTrain, Split::kValid, Split::kTest}) {
    ASSERT_OK_AND_ASSIGN(std::string text, read_file(options.out_dir + "/" + split_name(split) + ".txt"));
    const auto lines = data::split_lines(text);
    EXPECT_EQ(static_cast<int64_t>(lines.size()), stats.per_split[static_cast<int>(split)]);
    for (const std::string& line : lines) {
      EXPECT_EQ(split_of(line, 0.05, 0.05), split);
      EXPECT_NE(line.find(" , said he ."), std::string::npos) << line;
    }
    total += lines.size();
  }
  EXPECT_EQ(total, 300);
  expect_error(build_fortune_corpus({"/nonexistent", temp_path("o")}).status(), absl::StatusCode::kNotFound,
               {"/nonexistent"});
}

TEST(FortuneCorpusTest, RealFortunes) {
  const std::string dir = "/usr/share/games/fortunes";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "fortunes not installed in " << dir;
  ASSERT_OK_AND_ASSIGN(FortuneCorpusStats stats, build_fortune_corpus({dir, temp_path("real")}));
  EXPECT_GT(stats.paragraphs, 1000);
  EXPECT_GT(stats.per_split[1], 0);
  EXPECT_GT(stats.per_split[2], 0);
}

}  // namespace
}  // namespace ts::corpus
