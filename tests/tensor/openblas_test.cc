// OpenBLAS's kernels: chosen by instruction set where OpenBLAS does not know
// the CPU (it fell back to Prescott's SSE3 kernels on Emerald Rapids), and
// never Prescott on a machine with AVX, as every machine here has.
#include "tensor/cpu/openblas.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ts::cpu {
namespace {

TEST(OpenBlasTest, CoreForTheInstructionSets) {
  EXPECT_EQ(core_for_isa(true, true, true), "SkylakeX");
  EXPECT_EQ(core_for_isa(false, true, true), "Haswell");
  EXPECT_EQ(core_for_isa(false, false, true), "Sandybridge");
  EXPECT_EQ(core_for_isa(false, false, false), "");
}

TEST(OpenBlasTest, NoSse3KernelsOnAnAvxMachine) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx")) GTEST_SKIP() << "no AVX on this CPU";
  const std::string core = openblas_core();
  EXPECT_FALSE(absl::StartsWith(core, "Prescott")) << core;
}

}  // namespace
}  // namespace ts::cpu
