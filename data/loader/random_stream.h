// A counter-based random stream for one sample: the numbers a transform or a
// synthetic set draws depend only on (seed, stream, draw number), never on
// which worker thread runs it or when, so loading is reproducible for a fixed
// seed whatever the number of workers.
#pragma once

#include <cstdint>

#include "tensor/philox.h"

namespace ts::data {

// What a seed is used for. A run hands one seed to several uses (and the
// tensor ops' generator takes it as it is, for weight init and dropout); each
// use draws under its own key, RandomStream::key_for(seed, use, part), so no
// two of them share numbers: with one key for all, the loader's epoch 2 drew
// the very numbers a synthetic set's stream 2 had drawn its labels from.
enum class SeedUse : uint64_t {
  kSampleTransform = 1,  // the loader's per-sample streams; part: the epoch
  kShuffle = 2,          // the samplers' permutations; part: the epoch
  kSynthetic = 3,        // the synthetic sets; part: the set's salt
  kBpttLengths = 4,      // BpttBatches' random window lengths; part: the epoch
  kTokenBuckets = 5,     // TokenBucketBatchSampler's two shuffles; part: 2 * epoch (+ 1)
};

class RandomStream {
 public:
  // `key` selects the family of streams (see key_for), `stream` one of them.
  RandomStream(uint64_t key, uint64_t stream) : key_(key), stream_(stream) {}

  // The key of `part` of `use` of `seed`: any two different triples give
  // unrelated keys, unrelated to the seed too (the ops' generator's key).
  static uint64_t key_for(uint64_t seed, SeedUse use, uint64_t part) {
    return mix_key(mix_key(seed, static_cast<uint64_t>(use)), part);
  }

  // The stream the loader hands the transform of dataset sample `index` in
  // `epoch`: every rank and worker count gives the same augmentation.
  static RandomStream for_sample(uint64_t seed, uint64_t epoch, uint64_t index) {
    return RandomStream(key_for(seed, SeedUse::kSampleTransform, epoch), index);
  }

  uint32_t next_u32() {
    if (used_ == 4) refill();
    return words_.v[used_++];
  }
  uint64_t next_u64() {
    const uint64_t hi = next_u32();
    return (hi << 32) | next_u32();
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n) for n >= 1 (multiply-shift; the bias is below
  // n / 2^64).
  int64_t uniform_int(int64_t n) {
    return static_cast<int64_t>((static_cast<unsigned __int128>(next_u64()) * static_cast<uint64_t>(n)) >> 64);
  }
  bool bernoulli(double p) { return uniform() < p; }
  // Standard normal (Box-Muller on two fresh uniforms).
  double normal();

 private:
  // A 64-bit key from two words (splitmix64 finalizer on each), so nearby
  // pairs give unrelated keys.
  static uint64_t mix_key(uint64_t a, uint64_t b) { return mix(mix(a) ^ (b + 0x9E3779B97F4A7C15ull)); }
  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  void refill() {
    words_ = philox4x32_10(Philox4{{static_cast<uint32_t>(counter_), static_cast<uint32_t>(counter_ >> 32),
                                    static_cast<uint32_t>(stream_), static_cast<uint32_t>(stream_ >> 32)}},
                           static_cast<uint32_t>(key_), static_cast<uint32_t>(key_ >> 32));
    ++counter_;
    used_ = 0;
  }

  uint64_t key_;
  uint64_t stream_;
  uint64_t counter_ = 0;
  Philox4 words_{};
  int used_ = 4;
};

}  // namespace ts::data
