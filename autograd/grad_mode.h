// Whether ops record the graph for backward. Off inside a NoGradGuard (eval
// loops, optimizer updates); the switch is per thread, as in PyTorch.
#pragma once

namespace ts::autograd {

bool grad_enabled();

class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace ts::autograd
