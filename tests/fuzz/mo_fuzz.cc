// .mo catalog parsing on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "data/readers/mo_file.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto entries = ts::data::parse_mo(bytes, "fuzz");
  if (!entries.ok()) {
    FUZZ_CHECK(absl::StartsWith(entries.status().message(), "fuzz: "));
    return 0;
  }
  FUZZ_CHECK(28 + 8 * entries->size() <= size);  // both tables fit (they may overlap)
  size_t total = 0;
  for (const ts::data::MoEntry& e : *entries) {
    FUZZ_CHECK(!e.msgstr.empty());
    total += e.context.size() + e.msgid.size() + e.msgid_plural.size();
    for (const auto& s : e.msgstr) total += s.size();
  }
  FUZZ_CHECK(total <= 64 * size);
  return 0;
}
