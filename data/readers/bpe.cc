#include "data/readers/bpe.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "data/readers/utf8.h"

namespace ts::data {
namespace {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'; }

template <typename F>
void for_each_word(absl::string_view line, F f) {
  size_t p = 0;
  while (p < line.size()) {
    while (p < line.size() && is_space(line[p])) ++p;
    const size_t start = p;
    while (p < line.size() && !is_space(line[p])) ++p;
    if (p > start) f(line.substr(start, p - start));
  }
}

// Characters of a word as interned-symbol keys, the last with the marker.
std::vector<std::string> initial_symbols(absl::string_view word, char word_end) {
  std::vector<std::string> chars = utf8_characters(word);
  chars.back().push_back(word_end);
  return chars;
}

// Replaces each non-overlapping (a, b), left to right, by `merged`.
void merge_in_place(std::vector<int32_t>& seq, int32_t a, int32_t b, int32_t merged) {
  size_t out = 0;
  for (size_t i = 0; i < seq.size(); ++i) {
    if (i + 1 < seq.size() && seq[i] == a && seq[i + 1] == b) {
      seq[out++] = merged;
      ++i;
    } else {
      seq[out++] = seq[i];
    }
  }
  seq.resize(out);
}

}  // namespace

absl::StatusOr<BpeTokenizer> BpeTokenizer::learn(const std::vector<absl::Span<const std::string>>& corpora,
                                                 const BpeOptions& options) {
  if (options.vocab_size <= kNumSpecial || options.min_frequency < 1) {
    return absl::InvalidArgumentError(absl::StrCat("BpeTokenizer::learn: vocab_size ", options.vocab_size,
                                                   " must exceed ", kNumSpecial, " and min_frequency ",
                                                   options.min_frequency, " must be >= 1"));
  }
  absl::flat_hash_map<std::string, int64_t> counts;
  for (absl::Span<const std::string> lines : corpora) {
    for (const std::string& line : lines) for_each_word(line, [&](absl::string_view w) { ++counts[w]; });
  }
  if (counts.empty()) return absl::InvalidArgumentError("BpeTokenizer::learn: the train split has no words");
  // Sorted, so symbol ids (and with them tie-breaks) do not depend on hashing.
  std::vector<std::pair<std::string, int64_t>> words(counts.begin(), counts.end());
  std::sort(words.begin(), words.end());

  BpeTokenizer tok;
  std::vector<std::string> alphabet;
  for (const auto& [word, count] : words) {
    for (std::string& c : utf8_characters(word)) {
      alphabet.push_back(c);
      alphabet.push_back(c + kWordEnd);
    }
  }
  std::sort(alphabet.begin(), alphabet.end());
  alphabet.erase(std::unique(alphabet.begin(), alphabet.end()), alphabet.end());
  for (const std::string& s : alphabet) tok.symbols_.add(s);

  std::vector<std::vector<int32_t>> seqs;
  std::vector<int64_t> freq;
  for (const auto& [word, count] : words) {
    std::vector<int32_t> seq;
    for (const std::string& s : initial_symbols(word, kWordEnd)) seq.push_back(tok.symbols_.id(s));
    seqs.push_back(std::move(seq));
    freq.push_back(count);
  }

  // Pair counts, the words each pair occurs in (may hold stale entries), and
  // a max-heap of (count, pair) with lazy invalidation: an entry whose count
  // no longer matches is re-queued with the current count when it surfaces.
  absl::flat_hash_map<uint64_t, int64_t> pair_count;
  absl::flat_hash_map<uint64_t, std::vector<int32_t>> pair_words;
  for (size_t w = 0; w < seqs.size(); ++w) {
    for (size_t i = 0; i + 1 < seqs[w].size(); ++i) {
      const uint64_t key = pair_key(seqs[w][i], seqs[w][i + 1]);
      pair_count[key] += freq[w];
      pair_words[key].push_back(static_cast<int32_t>(w));
    }
  }
  using Entry = std::pair<int64_t, uint64_t>;
  auto lower_priority = [](const Entry& x, const Entry& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(lower_priority)> heap(lower_priority);
  for (const auto& [key, count] : pair_count) heap.push({count, key});

  std::vector<int64_t> visited(seqs.size(), -1);
  while (!heap.empty() && tok.vocab_size() < options.vocab_size) {
    const auto [count, key] = heap.top();
    heap.pop();
    const int64_t current = pair_count[key];
    if (current != count) {
      if (current > 0) heap.push({current, key});
      continue;
    }
    if (count < options.min_frequency) break;
    const int32_t a = static_cast<int32_t>(key >> 32), b = static_cast<int32_t>(key & 0xffffffffu);
    const int32_t merged = static_cast<int32_t>(tok.symbols_.add(tok.symbols_.word(a) + tok.symbols_.word(b)));
    const int32_t rank = static_cast<int32_t>(tok.merges_.size());
    tok.merge_rank_[key] = rank;
    tok.merges_.push_back({key, merged});

    std::vector<int32_t> affected = std::move(pair_words[key]);
    pair_words.erase(key);
    std::vector<uint64_t> grown;
    for (int32_t w : affected) {
      if (visited[w] == rank) continue;
      visited[w] = rank;
      std::vector<int32_t>& seq = seqs[w];
      for (size_t i = 0; i + 1 < seq.size(); ++i) pair_count[pair_key(seq[i], seq[i + 1])] -= freq[w];
      merge_in_place(seq, a, b, merged);
      for (size_t i = 0; i + 1 < seq.size(); ++i) {
        const uint64_t k = pair_key(seq[i], seq[i + 1]);
        pair_count[k] += freq[w];
        // Only pairs with the new symbol are new to this word's lists.
        if (seq[i] == merged || seq[i + 1] == merged) {
          pair_words[k].push_back(w);
          grown.push_back(k);
        }
      }
    }
    std::sort(grown.begin(), grown.end());
    grown.erase(std::unique(grown.begin(), grown.end()), grown.end());
    for (uint64_t k : grown) heap.push({pair_count[k], k});
  }
  return tok;
}

std::vector<int32_t> BpeTokenizer::segment(absl::string_view word) const {
  std::vector<int32_t> seq;
  for (const std::string& s : initial_symbols(word, kWordEnd)) {
    seq.push_back(symbols_.contains(s) ? static_cast<int32_t>(symbols_.id(s)) : -1);
  }
  // Apply the earliest-learned merge present, all its occurrences, until
  // none applies: the order the merges were learned in.
  while (seq.size() > 1) {
    int32_t best = std::numeric_limits<int32_t>::max();
    for (size_t i = 0; i + 1 < seq.size(); ++i) {
      if (seq[i] < 0 || seq[i + 1] < 0) continue;
      auto it = merge_rank_.find(pair_key(seq[i], seq[i + 1]));
      if (it != merge_rank_.end()) best = std::min(best, it->second);
    }
    if (best == std::numeric_limits<int32_t>::max()) break;
    const Merge& m = merges_[best];
    merge_in_place(seq, static_cast<int32_t>(m.pair >> 32), static_cast<int32_t>(m.pair & 0xffffffffu), m.result);
  }
  return seq;
}

std::vector<int64_t> BpeTokenizer::encode(absl::string_view line) const {
  std::vector<int64_t> ids{kBos};
  for_each_word(line, [&](absl::string_view word) {
    for (int32_t s : segment(word)) ids.push_back(s < 0 ? kUnk : kNumSpecial + s);
  });
  ids.push_back(kEos);
  return ids;
}

std::string BpeTokenizer::token(int64_t id) const {
  if (id == kPad) return "<pad>";
  if (id == kBos) return "<s>";
  if (id == kEos) return "</s>";
  if (id == kUnk || id < 0 || id >= vocab_size()) return "<unk>";
  std::string s = symbols_.word(id - kNumSpecial);
  if (!s.empty() && s.back() == kWordEnd) {
    s.back() = '<';
    s += "/w>";
  }
  return s;
}

std::string BpeTokenizer::decode(absl::Span<const int64_t> ids) const {
  std::string out;
  for (int64_t id : ids) {
    if (id == kPad || id == kBos || id == kEos) continue;
    if (id == kUnk || id < 0 || id >= vocab_size()) {
      out += "<unk>";
      continue;
    }
    const std::string& s = symbols_.word(id - kNumSpecial);
    if (!s.empty() && s.back() == kWordEnd) {
      out.append(s, 0, s.size() - 1);
      out += ' ';
    } else {
      out += s;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace ts::data
