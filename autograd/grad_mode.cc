#include "autograd/grad_mode.h"

namespace ts::autograd {
namespace {
thread_local bool grad_mode = true;
}  // namespace

bool grad_enabled() { return grad_mode; }

NoGradGuard::NoGradGuard() : previous_(grad_mode) { grad_mode = false; }
NoGradGuard::~NoGradGuard() { grad_mode = previous_; }

}  // namespace ts::autograd
