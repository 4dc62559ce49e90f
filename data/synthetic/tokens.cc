#include "data/synthetic/tokens.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/loader/random_stream.h"
#include "data/synthetic/options_check.h"

namespace ts::data {
namespace {

constexpr uint64_t kTableSalt = 21, kChainSalt = 22;

}  // namespace

absl::StatusOr<std::unique_ptr<SyntheticTokenStream>> SyntheticTokenStream::create(SyntheticTokenOptions options) {
  RETURN_IF_ERROR(check_at_least("SyntheticTokenStream", "vocab_size", options.vocab_size, 2));
  RETURN_IF_ERROR(check_at_least("SyntheticTokenStream", "num_windows", options.num_windows, 0));
  RETURN_IF_ERROR(check_at_least("SyntheticTokenStream", "seq_len", options.seq_len, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticTokenStream", "branching", options.branching, 1));
  if (options.branching > 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("SyntheticTokenStream: branching must be at most 32, got ", options.branching));
  }
  return std::unique_ptr<SyntheticTokenStream>(new SyntheticTokenStream(options));
}

int64_t SyntheticTokenStream::successor(int64_t token, int64_t k) const {
  RandomStream rng(RandomStream::key_for(options_.seed, SeedUse::kSynthetic, kTableSalt),
                   static_cast<uint64_t>(token) * options_.branching + k);
  return rng.uniform_int(options_.vocab_size);
}

absl::StatusOr<Tensor> SyntheticTokenStream::tokens(int64_t start, int64_t count) const {
  if (start < 0 || count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("SyntheticTokenStream: bad token range start ", start, ", count ", count));
  }
  Tensor out = Tensor::allocate({count}, DType::kI64, Device::cpu());
  int64_t* dst = out.data<int64_t>();
  int64_t position = start;
  while (position < start + count) {
    const int64_t chunk = position / kChunk;
    RandomStream rng(RandomStream::key_for(options_.seed, SeedUse::kSynthetic, kChainSalt), chunk);
    int64_t token = rng.uniform_int(options_.vocab_size);
    const int64_t end = std::min(start + count, (chunk + 1) * kChunk);
    for (int64_t p = chunk * kChunk; p < end; ++p) {
      if (p > chunk * kChunk) {
        // Successor k with probability 2^-(k+1) (the last takes the rest):
        // the count of trailing one bits of a uniform word, capped.
        const uint32_t bits = rng.next_u32();
        const int64_t ones = bits == 0xFFFFFFFFu ? 32 : __builtin_ctz(~bits);
        const int64_t k = std::min<int64_t>(ones, options_.branching - 1);
        token = successor(token, k);
      }
      if (p >= position) dst[p - start] = token;
    }
    position = end;
  }
  return out;
}

absl::StatusOr<Example> SyntheticTokenStream::get(int64_t index) const {
  RETURN_IF_ERROR(check_index("SyntheticTokenStream", index, options_.num_windows));
  const int64_t len = options_.seq_len;
  ASSIGN_OR_RETURN(const Tensor window, tokens(index * len, len + 1));
  return Example{{window.narrow(0, 0, len), window.narrow(0, 1, len)}};
}

}  // namespace ts::data
