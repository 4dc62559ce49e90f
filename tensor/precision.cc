#include "tensor/precision.h"

#include <atomic>

namespace ts {
namespace {
std::atomic<bool> tf32_allowed{false};
std::atomic<bool> deterministic_required{false};
}  // namespace

void set_allow_tf32(bool allow) { tf32_allowed.store(allow); }
bool allow_tf32() { return tf32_allowed.load(); }

void set_deterministic_algorithms(bool on) { deterministic_required.store(on); }
bool deterministic_algorithms() { return deterministic_required.load(); }

}  // namespace ts
