// A word <-> id table: the vocabulary of the language-model corpus, and of the
// word-level translation tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace ts::data {

class Vocabulary {
 public:
  // Ids are dense, in order of first add(); `unknown` is the id that id()
  // returns for absent words (-1: none, then id() must only see known words).
  explicit Vocabulary(int64_t unknown = -1) : unknown_(unknown) {}

  // The word's id, adding it at the end when new.
  int64_t add(absl::string_view word);
  // The word's id, or the unknown id.
  int64_t id(absl::string_view word) const {
    auto it = ids_.find(word);
    return it == ids_.end() ? unknown_ : it->second;
  }
  bool contains(absl::string_view word) const { return ids_.contains(word); }
  const std::string& word(int64_t id) const { return words_[id]; }
  int64_t size() const { return static_cast<int64_t>(words_.size()); }
  int64_t unknown() const { return unknown_; }

 private:
  absl::flat_hash_map<std::string, int64_t> ids_;
  std::vector<std::string> words_;
  int64_t unknown_;
};

}  // namespace ts::data
