// GNU gettext message catalogs (.mo): the header, the tables of original and
// translated strings, and each entry's context, plural id and plural forms.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ts::data {

struct MoEntry {
  std::string context;              // msgctxt; empty when none
  std::string msgid;                // empty for the catalog's header entry
  std::string msgid_plural;         // empty when not a plural entry
  std::vector<std::string> msgstr;  // one translation per plural form
};

// Checks the magic (0x950412de, either byte order), the major revision (0 or
// 1; revision 1's system-dependent strings are not read), that both tables
// and every string lie inside the file. Errors start with `name`.
absl::StatusOr<std::vector<MoEntry>> parse_mo(absl::string_view bytes, absl::string_view name);
absl::StatusOr<std::vector<MoEntry>> read_mo(const std::string& path);

}  // namespace ts::data
