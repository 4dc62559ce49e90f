// Which vector instructions our own CPU loops use. They are compiled for the
// x86-64 baseline (SSE2, so the binaries run on every x86-64 CPU) and, where
// a loop gains from wider registers, a second time for AVX2, chosen once per
// process. Neither contracts a * b + c into an FMA (the AVX2 target leaves
// FMA out), so both give the same bits. TS_CPU_ISA=baseline keeps to the
// baseline, to test it or to compare.
#pragma once

#include <cstdint>

#include "tensor/cpu/parallel.h"

namespace ts::cpu {

// Whether the CPU has AVX2 and TS_CPU_ISA does not say "baseline".
bool use_avx2();

// Marks a lambda whose body must be compiled into the clone that calls it
// (run_widest's body and what that body calls per element): GCC inlines a
// baseline function into an AVX2 one only when told to or when it chooses.
#define TS_INLINE_INTO_CLONE __attribute__((always_inline))

template <typename Body, typename... Args>
__attribute__((target("avx2"))) void run_avx2(const Body& body, Args... args) {
  body(args...);
}
template <typename Body, typename... Args>
void run_baseline(const Body& body, Args... args) {
  body(args...);
}

// body(args...) compiled for AVX2 where use_avx2(), else for the baseline.
template <typename Body, typename... Args>
void run_widest(const Body& body, Args... args) {
  if (use_avx2()) {
    run_avx2(body, args...);
  } else {
    run_baseline(body, args...);
  }
}

// parallel_for with each chunk's body(begin, end) compiled by run_widest.
template <typename Body>
void parallel_for_widest(int64_t n, int64_t grain, const Body& body) {
  parallel_for(n, grain, [&](int64_t begin, int64_t end) { run_widest(body, begin, end); });
}

}  // namespace ts::cpu
