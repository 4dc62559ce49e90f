// OpenBLAS as the project links it (Debian's OpenMP build,
// third_party/openblas), with kernels for the CPUs it does not know.
//
// Debian 12's OpenBLAS 0.3.21 picks its kernels by CPU model number. On an
// x86 CPU newer than it (Intel Xeon Emerald Rapids, family 6 model 207) it
// falls back to its Prescott kernels (SSE3): there the AWD-LSTM step took
// 13.1 s instead of 5.6 s, 2.2x PyTorch's time. Linking this library makes
// OpenBLAS choose again, before main, by the instruction sets the CPU and OS
// offer: SkylakeX (AVX-512), Haswell (AVX2 and FMA) or Sandybridge (AVX),
// unless the user named a core in OPENBLAS_CORETYPE. CPUs OpenBLAS knows keep
// its choice.
#pragma once

#include <string>

namespace ts::cpu {

// The kernels OpenBLAS runs ("SkylakeX", "Haswell", ...), with " (chosen
// here; OpenBLAS found Prescott)" when this library chose them.
std::string openblas_core();

// The core for an x86 CPU with these instruction sets, or "" for none better
// than Prescott's.
std::string core_for_isa(bool avx512, bool avx2_fma, bool avx);

}  // namespace ts::cpu
