#include "tensor/cpu/isa.h"

#include <cstdlib>
#include <cstring>

namespace ts::cpu {

bool use_avx2() {
  static const bool available = [] {
    const char* isa = std::getenv("TS_CPU_ISA");
    return __builtin_cpu_supports("avx2") && !(isa != nullptr && std::strcmp(isa, "baseline") == 0);
  }();
  return available;
}

}  // namespace ts::cpu
