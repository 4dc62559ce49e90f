#include "tensor/precision.h"

#include <atomic>

namespace ts {
namespace {
std::atomic<bool> tf32_allowed{false};
}  // namespace

void set_allow_tf32(bool allow) { tf32_allowed.store(allow); }
bool allow_tf32() { return tf32_allowed.load(); }

}  // namespace ts
