#include "tools/corpus/text_clean.h"

namespace ts::corpus {
namespace {

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_word_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// "&name;" or "&#123;" at the start of `rest`.
bool starts_entity(absl::string_view rest) {
  size_t i = 1;
  if (i < rest.size() && rest[i] == '#') ++i;
  const size_t first = i;
  while (i < rest.size() && i < 12 &&
         ((rest[i] >= 'a' && rest[i] <= 'z') || (rest[i] >= 'A' && rest[i] <= 'Z') ||
          (rest[i] >= '0' && rest[i] <= '9'))) {
    ++i;
  }
  return i > first && i < rest.size() && rest[i] == ';';
}

}  // namespace

const char* split_name(Split split) {
  switch (split) {
    case Split::kTrain:
      return "train";
    case Split::kValid:
      return "valid";
    case Split::kTest:
      return "test";
  }
  return "train";
}

uint64_t fnv1a64(absl::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

Split split_of(absl::string_view key, double valid_fraction, double test_fraction) {
  // FNV's low bits mix poorly for short keys: a final avalanche (from
  // SplitMix64) before taking the top 53 bits as a uniform number.
  uint64_t z = fnv1a64(key);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
  if (u < test_fraction) return Split::kTest;
  if (u < test_fraction + valid_fraction) return Split::kValid;
  return Split::kTrain;
}

std::string normalize_whitespace(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (char c : text) {
    if (is_ascii_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::string strip_accelerators(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '&') {
      if (next == '&') {  // an escaped literal '&'
        out.push_back('&');
        ++i;
        continue;
      }
      if (is_word_char(next) && !starts_entity(text.substr(i))) continue;
    } else if (c == '_' && (i == 0 || is_ascii_space(text[i - 1]))) {
      if (next == '_') {  // an escaped literal '_'
        out.push_back('_');
        ++i;
        continue;
      }
      if (is_word_char(next)) continue;
    }
    out.push_back(c);
  }
  return out;
}

bool has_letter(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      // Skip flags, width, precision, length and the conversion itself.
      ++i;
      constexpr absl::string_view kSpecChars = "-+ #0123456789.*'$hlLqjzt";
      while (i < text.size() && kSpecChars.find(text[i]) != absl::string_view::npos) ++i;
      continue;
    }
    const auto u = static_cast<unsigned char>(text[i]);
    if (u >= 0x80 || (text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z')) return true;
  }
  return false;
}

}  // namespace ts::corpus
