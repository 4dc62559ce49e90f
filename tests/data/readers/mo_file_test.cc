#include "data/readers/mo_file.h"

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tests/data/readers/test_files.h"
#include "tests/tensor/testing.h"

namespace ts::data {
namespace {

using ::ts::data::testing::mo_bytes;
using ::ts::data::testing::MoMessage;
using ::ts::data::testing::write_temp;
using ::ts::testing::expect_error;

const std::vector<MoMessage>& messages() {
  static const auto* m = new std::vector<MoMessage>{
      {"", "Content-Type: text/plain; charset=UTF-8\n"},
      {"&Open",
       "\xc3\x96"
       "&ffnen"},
      {std::string("menu\x04"
                   "File",
                   9),
       "Datei"},
      {std::string("%d file\0%d files", 16), std::string("%d Datei\0%d Dateien", 19)},
  };
  return *m;
}

TEST(MoFileTest, ParsesBothByteOrders) {
  for (bool big : {false, true}) {
    SCOPED_TRACE(big ? "big-endian" : "little-endian");
    ASSERT_OK_AND_ASSIGN(auto entries, parse_mo(mo_bytes(messages(), big), "de.mo"));
    ASSERT_EQ(entries.size(), 4u);
    EXPECT_EQ(entries[0].msgid, "");
    EXPECT_EQ(entries[0].msgstr, (std::vector<std::string>{"Content-Type: text/plain; charset=UTF-8\n"}));
    EXPECT_EQ(entries[1].msgid, "&Open");
    EXPECT_EQ(entries[1].msgstr, (std::vector<std::string>{"\xc3\x96&ffnen"}));
    EXPECT_EQ(entries[2].context, "menu");
    EXPECT_EQ(entries[2].msgid, "File");
    EXPECT_EQ(entries[3].msgid, "%d file");
    EXPECT_EQ(entries[3].msgid_plural, "%d files");
    EXPECT_EQ(entries[3].msgstr, (std::vector<std::string>{"%d Datei", "%d Dateien"}));
  }
}

TEST(MoFileTest, BrokenFilesAreErrorsNamingTheFile) {
  const std::string good = mo_bytes(messages());
  expect_error(parse_mo("", "x.mo").status(), absl::StatusCode::kInvalidArgument, {"x.mo", "empty file"});
  expect_error(parse_mo(good.substr(0, 27), "x.mo").status(), absl::StatusCode::kInvalidArgument,
               {"x.mo", "truncated header", "27"});
  std::string bad_magic = good;
  bad_magic[0] = 0;
  expect_error(parse_mo(bad_magic, "x.mo").status(), absl::StatusCode::kInvalidArgument,
               {"x.mo", "bad magic number 0x950412", "0x950412de"});
  std::string revision = good;
  revision[6] = 2;  // major revision 2
  expect_error(parse_mo(revision, "x.mo").status(), absl::StatusCode::kInvalidArgument,
               {"x.mo", "unsupported .mo revision 2.0"});
  std::string many = good;
  many[8] = 100;  // N = 100 entries: the tables run past the end
  expect_error(parse_mo(many, "x.mo").status(), absl::StatusCode::kInvalidArgument,
               {"x.mo", "original table (100 entries at offset 28)", "past the end"});
  std::string far = good;
  far[16] = static_cast<char>(0xf0);  // translation table offset
  expect_error(parse_mo(far, "x.mo").status(), absl::StatusCode::kInvalidArgument, {"x.mo", "translation table"});
  // Cut inside the strings: the last translation runs past the end.
  expect_error(parse_mo(good.substr(0, good.size() - 5), "x.mo").status(), absl::StatusCode::kInvalidArgument,
               {"x.mo", "translation string 3", "past the end"});
  std::string long_string = good;
  long_string[28 + 8] = 0x7f;  // original 1's length
  expect_error(parse_mo(long_string, "x.mo").status(), absl::StatusCode::kInvalidArgument,
               {"x.mo", "original string 1"});
  const std::string path = write_temp("cut.mo", good.substr(0, 20));
  expect_error(read_mo(path).status(), absl::StatusCode::kInvalidArgument, {path, "truncated header"});
  expect_error(read_mo("/nonexistent/de.mo").status(), absl::StatusCode::kNotFound, {"/nonexistent/de.mo"});
}

TEST(MoFileTest, OverlappingStringsAreCapped) {
  // 1000 entries that all point at one 600-byte string.
  const uint32_t n = 1000;
  std::string bytes(28 + 16 * n + 600, 'a');
  auto put = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  for (auto [at, v] : {std::pair{0, 0x950412deu}, {4, 0u}, {8, n}, {12, 28u}, {16, 28 + 8 * n}, {20, 0u}, {24, 0u}}) {
    put(at, v);
  }
  for (uint32_t i = 0; i < 2 * n; ++i) {
    put(28 + 8 * i, 600);
    put(28 + 8 * i + 4, 28 + 16 * n);
  }
  expect_error(parse_mo(bytes, "x.mo").status(), absl::StatusCode::kInvalidArgument, {"x.mo", "overlapping"});
}

TEST(MoFileTest, ReadsTheInstalledGermanCatalogs) {
  const std::string dir = "/usr/share/locale/de/LC_MESSAGES";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no German catalogs in " << dir;
  int files = 0, translated = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".mo") continue;
    ASSERT_OK_AND_ASSIGN(auto entries, read_mo(entry.path().string()));
    ++files;
    for (const MoEntry& e : entries) translated += !e.msgid.empty() && !e.msgstr.empty();
  }
  if (files == 0) GTEST_SKIP() << "no .mo files in " << dir;
  EXPECT_GT(translated, files);
}

}  // namespace
}  // namespace ts::data
