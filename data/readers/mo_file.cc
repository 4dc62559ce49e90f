#include "data/readers/mo_file.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "data/readers/file_io.h"

namespace ts::data {
namespace {

constexpr uint32_t kMagic = 0x950412de;
constexpr size_t kHeaderBytes = 28;  // magic, revision, N, O, T, S, H

class WordReader {
 public:
  WordReader(absl::string_view bytes, bool swap) : bytes_(bytes), swap_(swap) {}
  uint32_t at(uint64_t offset) const {  // the caller has checked offset + 4 <= size
    const auto* u = reinterpret_cast<const unsigned char*>(bytes_.data() + offset);
    const uint32_t little = uint32_t{u[0]} | (uint32_t{u[1]} << 8) | (uint32_t{u[2]} << 16) | (uint32_t{u[3]} << 24);
    return swap_ ? __builtin_bswap32(little) : little;
  }

 private:
  absl::string_view bytes_;
  bool swap_;
};

}  // namespace

absl::StatusOr<std::vector<MoEntry>> parse_mo(absl::string_view bytes, absl::string_view name) {
  if (bytes.size() < kHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", bytes.empty() ? "empty file" : "truncated header",
                                                   ": a .mo file needs at least ", kHeaderBytes, " bytes, it has ",
                                                   bytes.size()));
  }
  const WordReader little(bytes, false);
  const uint32_t magic = little.at(0);
  if (magic != kMagic && magic != __builtin_bswap32(kMagic)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: bad magic number 0x%08x (a .mo file starts with 0x950412de)", name, magic));
  }
  const WordReader word(bytes, magic != kMagic);
  const uint32_t revision = word.at(4);
  if ((revision >> 16) > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": unsupported .mo revision ", revision >> 16, ".", revision & 0xffff, " (known: 0, 1)"));
  }
  const uint64_t n = word.at(8), originals = word.at(12), translations = word.at(16);
  for (auto [table, what] : {std::pair{originals, "original"}, std::pair{translations, "translation"}}) {
    if (table + 8 * n > bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": the ", what, " table (", n, " entries at offset ", table,
                                                     ") runs past the end of the file (", bytes.size(), " bytes)"));
    }
  }
  auto string_at = [&](uint64_t table, uint64_t i, const char* what) -> absl::StatusOr<absl::string_view> {
    const uint64_t length = word.at(table + 8 * i), offset = word.at(table + 8 * i + 4);
    if (offset + length > bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": ", what, " string ", i, " (", length, " bytes at offset ",
                                                     offset, ") runs past the end of the file (", bytes.size(),
                                                     " bytes)"));
    }
    return bytes.substr(offset, length);
  };
  std::vector<MoEntry> entries;
  entries.reserve(n);
  // Entries may point at the same bytes; a cap on the total copied keeps a
  // crafted file from turning n entries of the whole file into n copies.
  const uint64_t max_total = 64 * static_cast<uint64_t>(bytes.size());
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(absl::string_view original, string_at(originals, i, "original"));
    ASSIGN_OR_RETURN(absl::string_view translation, string_at(translations, i, "translation"));
    total += original.size() + translation.size();
    if (total > max_total) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": entries up to ", i, " reference ", total,
                                                     " bytes of strings, more than 64x the file: overlapping strings"));
    }
    MoEntry entry;
    // "context \x04 msgid \0 msgid_plural"; translations "form0 \0 form1 ...".
    if (const size_t eot = original.find('\x04'); eot != absl::string_view::npos) {
      entry.context = std::string(original.substr(0, eot));
      original.remove_prefix(eot + 1);
    }
    if (const size_t nul = original.find('\0'); nul != absl::string_view::npos) {
      entry.msgid_plural = std::string(original.substr(nul + 1));
      original = original.substr(0, nul);
    }
    entry.msgid = std::string(original);
    entry.msgstr = absl::StrSplit(translation, absl::string_view("\0", 1));
    entries.push_back(std::move(entry));
  }
  return entries;
}

absl::StatusOr<std::vector<MoEntry>> read_mo(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string bytes, read_inflated(path));
  return parse_mo(bytes, path);
}

}  // namespace ts::data
