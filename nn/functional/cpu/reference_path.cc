#include <atomic>
#include <cstdlib>
#include <cstring>

#include "nn/functional/cpu_reference_path.h"

namespace ts::nn::functional {
namespace {

// The environment is read once: a switch flipping under a running model
// would mix kernels within one step.
std::atomic<bool>& reference_path() {
  static std::atomic<bool> reference = [] {
    const char* env = std::getenv("TS_CPU_REFERENCE");
    return env != nullptr && std::strcmp(env, "1") == 0;
  }();
  return reference;
}

}  // namespace

bool cpu_reference_path() { return reference_path().load(std::memory_order_relaxed); }

void set_cpu_reference_path(bool reference) { reference_path().store(reference, std::memory_order_relaxed); }

}  // namespace ts::nn::functional
