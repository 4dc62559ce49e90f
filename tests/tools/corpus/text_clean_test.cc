#include "tools/corpus/text_clean.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ts::corpus {
namespace {

TEST(TextCleanTest, NormalizesWhitespace) {
  EXPECT_EQ(normalize_whitespace("  a\tb \n\n c  "), "a b c");
  EXPECT_EQ(normalize_whitespace(" \n "), "");
}

TEST(TextCleanTest, StripsAcceleratorsButNotIdentifiersOrEntities) {
  EXPECT_EQ(strip_accelerators("&Open"), "Open");
  EXPECT_EQ(strip_accelerators("E&xit"), "Exit");
  EXPECT_EQ(strip_accelerators("_Open"), "Open");
  EXPECT_EQ(strip_accelerators("Save _As..."), "Save As...");
  EXPECT_EQ(strip_accelerators("_\xc3\x96"
                               "ffnen"),
            "\xc3\x96"
            "ffnen");
  EXPECT_EQ(strip_accelerators("Tom && Jerry"), "Tom & Jerry");
  EXPECT_EQ(strip_accelerators("__init"), "_init");
  EXPECT_EQ(strip_accelerators("file_name"), "file_name");
  EXPECT_EQ(strip_accelerators("a & b"), "a & b");
  EXPECT_EQ(strip_accelerators("x &amp; y &#38; z"), "x &amp; y &#38; z");
  EXPECT_EQ(strip_accelerators("trailing &"), "trailing &");
}

TEST(TextCleanTest, SplitIsDeterministicAndProportional) {
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 20000; ++i) {
    const std::string key = absl::StrCat("line ", i);
    const Split s = split_of(key, 0.1, 0.05);
    EXPECT_EQ(s, split_of(key, 0.1, 0.05));
    ++counts[static_cast<int>(s)];
  }
  EXPECT_NEAR(counts[1] / 20000.0, 0.10, 0.01);
  EXPECT_NEAR(counts[2] / 20000.0, 0.05, 0.01);
  // Pinned values: the split must not change across machines or versions.
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(split_of("anything", 0, 0), Split::kTrain);
  EXPECT_EQ(split_of("anything", 0, 1), Split::kTest);
  EXPECT_STREQ(split_name(Split::kValid), "valid");
}

TEST(TextCleanTest, HasLetter) {
  EXPECT_TRUE(has_letter("%s: a"));
  EXPECT_TRUE(has_letter("\xc3\xa4"));
  EXPECT_TRUE(has_letter("100% sure"));
  EXPECT_FALSE(has_letter("%s: %-5lu (%%) %.*f %1$s"));
  EXPECT_FALSE(has_letter("42 - 7"));
}

}  // namespace
}  // namespace ts::corpus
