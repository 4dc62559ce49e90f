// ThreadSanitizer (--config=tsan) cannot see GNU OpenMP's barriers: libgomp
// is not instrumented, so a team wider than one thread reports races between
// what its threads read before the barrier and what the caller frees after
// it. The config keeps teams at one thread (OMP_NUM_THREADS=1); a test that
// widens a team itself skips there, through this macro, at its start.
#pragma once

#include "gtest/gtest.h"

#ifdef __SANITIZE_THREAD__
#define TS_SKIP_WIDE_OPENMP_TEAMS_UNDER_TSAN() \
  GTEST_SKIP() << "ThreadSanitizer cannot see GNU OpenMP's barriers (libgomp is not instrumented)"
#else
#define TS_SKIP_WIDE_OPENMP_TEAMS_UNDER_TSAN() static_cast<void>(0)
#endif
