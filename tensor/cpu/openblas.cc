#include "tensor/cpu/openblas.h"

#include <cstdlib>
#include <cstring>

extern "C" {
char* openblas_get_corename(void);
// OpenBLAS's dynamic-architecture entry points (driver/others/dynamic.c):
// init reads OPENBLAS_CORETYPE and sets the kernel table when none is set;
// quit clears it.
void gotoblas_dynamic_init(void);
void gotoblas_dynamic_quit(void);
}

namespace ts::cpu {
namespace {

bool g_chosen_here = false;

// A constructor of this library runs after OpenBLAS's (it depends on it),
// before main and any thread that could call a BLAS routine.
__attribute__((constructor)) void choose_core_for_unknown_cpu() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice
  if (std::strcmp(openblas_get_corename(), "Prescott") != 0) return;
  __builtin_cpu_init();
  // GCC's checks include the OS's: AVX-512 state enabled in XCR0.
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512cd");
  const std::string core = core_for_isa(avx512, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
                                        __builtin_cpu_supports("avx"));
  if (core.empty()) return;
  // Set for OpenBLAS to read, and for the processes this one starts.
  ::setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  g_chosen_here = true;
}

}  // namespace

std::string core_for_isa(bool avx512, bool avx2_fma, bool avx) {
  if (avx512) return "SkylakeX";
  if (avx2_fma) return "Haswell";
  if (avx) return "Sandybridge";
  return "";
}

std::string openblas_core() {
  std::string name = openblas_get_corename();
  if (g_chosen_here) name += " (chosen here; OpenBLAS found Prescott)";
  return name;
}

}  // namespace ts::cpu
