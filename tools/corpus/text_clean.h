// Text clean-up and the deterministic split shared by the corpus builders.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace ts::corpus {

enum class Split { kTrain, kValid, kTest };
const char* split_name(Split split);  // "train", "valid", "test"

// FNV-1a, 64 bits: stable across machines and library versions (unlike
// std::hash), so a line lands in the same split everywhere.
uint64_t fnv1a64(absl::string_view text);

// The split of a line from the hash of `key`: test with probability
// test_fraction, valid with valid_fraction, else train.
Split split_of(absl::string_view key, double valid_fraction, double test_fraction);

// Runs of ASCII whitespace (newlines included) become one space; both ends
// are trimmed.
std::string normalize_whitespace(absl::string_view text);

// Removes keyboard accelerator marks from UI strings: '&' before a letter or
// digit anywhere ("E&xit", "&Open"; Qt/KDE style), '_' before a letter or
// digit at the start of a word ("_Open", "Save _As"; GTK style); "&&", and
// "__" at a word's start, become literal '&' and '_'. A '_' inside a word
// ("file_name") and an '&' starting an HTML entity ("&amp;") are kept. Non-ASCII bytes count as
// letters, so "_Öffnen" loses its mark.
std::string strip_accelerators(absl::string_view text);

// Whether the text holds a letter (ASCII or any non-ASCII byte) outside
// printf directives ("%s", "%-5lu", "%%"): "%s: %d" has none.
bool has_letter(absl::string_view text);

}  // namespace ts::corpus
