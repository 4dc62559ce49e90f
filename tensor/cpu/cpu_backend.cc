#include "tensor/cpu/cpu_backend.h"

namespace ts::cpu {

Backend& backend() {
  static CpuBackend* instance = new CpuBackend;
  return *instance;
}

}  // namespace ts::cpu
