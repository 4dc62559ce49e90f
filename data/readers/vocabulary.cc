#include "data/readers/vocabulary.h"

namespace ts::data {

int64_t Vocabulary::add(absl::string_view word) {
  auto [it, inserted] = ids_.try_emplace(word, size());
  if (inserted) words_.emplace_back(word);
  return it->second;
}

}  // namespace ts::data
