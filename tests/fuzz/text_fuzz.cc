// The text readers on arbitrary bytes: language-model splits
// (data/readers/lm_text.h) and line-aligned parallel text
// (data/readers/parallel_text.h) with a BPE tokenizer learned on it. The
// input is cut at its first two NUL bytes into train, valid and test (source
// and target: the first two). Errors name the split's file; token ids lie
// within the vocabulary, and every line ends in one <eos> (a word "<eos>"
// in the text adds one more).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "data/readers/bpe.h"
#include "data/readers/lm_text.h"
#include "data/readers/parallel_text.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// Every error names the file at fault; the inputs' names all start so.
bool names_an_input(const absl::Status& status) { return absl::StrContains(status.message(), "fuzz-"); }

void check_lm(const std::vector<std::string>& parts) {
  const ts::data::LmSplitText train{"fuzz-train", parts[0]}, valid{"fuzz-valid", parts[1]}, test{"fuzz-test", parts[2]};
  auto corpus = ts::data::make_lm_corpus(train, valid, test);
  if (!corpus.ok()) {
    FUZZ_CHECK(names_an_input(corpus.status()));
    return;
  }
  const int64_t vocab = corpus->vocab.size();
  FUZZ_CHECK(vocab >= 2);
  const ts::data::LmSplitText* texts[] = {&train, &valid, &test};
  const ts::Tensor* streams[] = {&corpus->train, &corpus->valid, &corpus->test};
  for (int s = 0; s < 3; ++s) {
    const ts::Tensor& stream = *streams[s];
    const int64_t* ids = stream.data<int64_t>();
    int64_t eos = 0;
    for (int64_t i = 0; i < stream.numel(); ++i) {
      FUZZ_CHECK(ids[i] >= 0 && ids[i] < vocab);
      eos += ids[i] == 1;
    }
    // One <eos> per line: lines end at \n, \r\n or \r, a final one ending the
    // last.
    const std::string& text = texts[s]->text;
    int64_t ends = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      ends += text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'));
    }
    const int64_t lines = text.empty() ? 0 : ends + (text.back() == '\n' || text.back() == '\r' ? 0 : 1);
    // A word "<eos>" in the text is that token too, as in awd-lstm-lm's
    // vocabulary: at most one per occurrence of the string.
    int64_t literal = 0;
    for (size_t at = text.find("<eos>"); at != std::string::npos; at = text.find("<eos>", at + 1)) ++literal;
    FUZZ_CHECK(eos >= lines && eos - lines <= literal);
  }
}

void check_parallel(const std::vector<std::string>& parts) {
  auto corpus = ts::data::parse_parallel(parts[0], "fuzz-source", parts[1], "fuzz-target");
  if (!corpus.ok()) {
    FUZZ_CHECK(names_an_input(corpus.status()));
    return;
  }
  FUZZ_CHECK(corpus->source.size() == corpus->target.size());
  auto tokenizer = ts::data::BpeTokenizer::learn({corpus->source, corpus->target}, {.vocab_size = 64});
  if (!tokenizer.ok()) return;
  for (const std::string& line : corpus->source) {
    const std::vector<int64_t> ids = tokenizer->encode(line);
    FUZZ_CHECK(ids.size() >= 2 && ids.front() == ts::data::BpeTokenizer::kBos &&
               ids.back() == ts::data::BpeTokenizer::kEos);
    for (const int64_t id : ids) FUZZ_CHECK(id >= 0 && id < tokenizer->vocab_size());
    tokenizer->decode(ids);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts = absl::StrSplit(bytes, absl::MaxSplits('\0', 2));
  parts.resize(3);
  check_lm(parts);
  check_parallel(parts);
  return 0;
}
