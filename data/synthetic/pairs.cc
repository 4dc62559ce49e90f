#include "data/synthetic/pairs.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "data/loader/random_stream.h"
#include "data/loader/sampler.h"
#include "data/synthetic/options_check.h"

namespace ts::data {
namespace {

constexpr uint64_t kPermutationSalt = 31, kSentenceSalt = 32;

}  // namespace

absl::StatusOr<std::unique_ptr<SyntheticSentencePairs>> SyntheticSentencePairs::create(SyntheticPairOptions options) {
  RETURN_IF_ERROR(check_at_least("SyntheticSentencePairs", "size", options.size, 0));
  RETURN_IF_ERROR(check_at_least("SyntheticSentencePairs", "vocab_size", options.vocab_size, kFirstWord + 1));
  RETURN_IF_ERROR(check_at_least("SyntheticSentencePairs", "min_words", options.min_words, 1));
  RETURN_IF_ERROR(check_at_least("SyntheticSentencePairs", "max_words", options.max_words, options.min_words));
  return std::unique_ptr<SyntheticSentencePairs>(new SyntheticSentencePairs(options));
}

SyntheticSentencePairs::SyntheticSentencePairs(SyntheticPairOptions options)
    : options_(options),
      permutation_(shuffled_range(options.vocab_size - kFirstWord,
                                  RandomStream::key_for(options.seed, SeedUse::kSynthetic, kPermutationSalt), 0)) {}

int64_t SyntheticSentencePairs::translate(int64_t word) const { return kFirstWord + permutation_[word - kFirstWord]; }

absl::StatusOr<Example> SyntheticSentencePairs::get(int64_t index) const {
  RETURN_IF_ERROR(check_index("SyntheticSentencePairs", index, options_.size));
  RandomStream rng(RandomStream::key_for(options_.seed, SeedUse::kSynthetic, kSentenceSalt), index);
  const int64_t words = options_.min_words + rng.uniform_int(options_.max_words - options_.min_words + 1);
  Tensor source = Tensor::allocate({words + 2}, DType::kI64, Device::cpu());
  Tensor target = Tensor::allocate({words + 2}, DType::kI64, Device::cpu());
  int64_t* src = source.data<int64_t>();
  int64_t* tgt = target.data<int64_t>();
  src[0] = tgt[0] = kBos;
  src[words + 1] = tgt[words + 1] = kEos;
  for (int64_t i = 1; i <= words; ++i) src[i] = kFirstWord + rng.uniform_int(options_.vocab_size - kFirstWord);
  for (int64_t i = 1; i <= words; ++i) tgt[i] = translate(src[words + 1 - i]);
  return Example{{std::move(source), std::move(target)}};
}

}  // namespace ts::data
