// The seeded state random ops draw from. A Generator hands each op a disjoint
// range of Philox counters, so a sequence of ops with one seed gives the same
// numbers on every run and on either device.
#pragma once

#include <cstdint>
#include <mutex>

#include "tensor/philox.h"

namespace ts {

class Generator {
 public:
  struct State {
    uint64_t seed = 0;
    uint64_t offset = 0;
  };

  explicit Generator(uint64_t seed = 0) : state_{seed, 0} {}
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  // Reseeds and rewinds to the stream's beginning.
  void manual_seed(uint64_t seed);
  // Reserves `groups` counters for one op; thread safe.
  PhiloxKey reserve(uint64_t groups);
  // For checkpoints: resuming from a saved state continues the same stream.
  State state() const;
  void set_state(State state);

 private:
  mutable std::mutex mu_;
  State state_;
};

// The generator ops use when none is passed.
Generator& default_generator();
inline void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace ts
