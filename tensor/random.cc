#include "tensor/random.h"

namespace ts {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = {seed, 0};
}

PhiloxKey Generator::reserve(uint64_t groups) {
  std::lock_guard<std::mutex> lock(mu_);
  PhiloxKey key{state_.seed, state_.offset};
  state_.offset += groups;
  return key;
}

Generator::State Generator::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

void Generator::set_state(State state) {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = state;
}

Generator& default_generator() {
  static Generator* generator = new Generator(0);
  return *generator;
}

}  // namespace ts
