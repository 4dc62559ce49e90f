#include "data/readers/utf8.h"

#include "gtest/gtest.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::testing::expect_error;

TEST(Utf8Test, AcceptsWellFormedAndRejectsEveryKindOfMalformed) {
  EXPECT_EQ(utf8_sequence_length("a"), 1u);
  EXPECT_EQ(utf8_sequence_length("\xc3\xa4"), 2u);          // ä
  EXPECT_EQ(utf8_sequence_length("\xe2\x82\xac"), 3u);      // €
  EXPECT_EQ(utf8_sequence_length("\xf0\x9f\x98\x80"), 4u);  // emoji
  EXPECT_EQ(utf8_sequence_length("\xf4\x8f\xbf\xbf"), 4u);  // U+10FFFF
  for (const char* bad : {"\x80", "\xc0\xaf", "\xc1\xbf", "\xc3", "\xc3\x28", "\xe0\x80\xaf", "\xed\xa0\x80",
                          "\xf0\x80\x80\xaf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\xe2\x82"}) {
    SCOPED_TRACE(::testing::PrintToString(std::string(bad)));
    EXPECT_EQ(utf8_sequence_length(bad), 0u);
  }
  EXPECT_OK(check_utf8("plain\n\xc3\xa4\xe2\x82\xac\n", "f"));
  expect_error(check_utf8("ab\ncd\xe2\x82 x", "f.txt"), absl::StatusCode::kInvalidArgument, {"f.txt:2:3:", "0xe2"});
  // Lines as the readers count them: \r\n is one break, a lone \r is one.
  expect_error(check_utf8("a\r\nb\rcd\xff", "crlf.txt"), absl::StatusCode::kInvalidArgument, {"crlf.txt:3:3:"});
  EXPECT_EQ(utf8_characters("a\xc3\xa4\xe2\x82\xac"), (std::vector<std::string>{"a", "\xc3\xa4", "\xe2\x82\xac"}));
}

}  // namespace
}  // namespace ts::data
