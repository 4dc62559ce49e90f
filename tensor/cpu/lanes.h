// Reductions in double over kLanes independent partial results: one
// running sum (or maximum) is a chain of dependent operations, one per
// latency, which the compiler may not split, since reassociating floating
// point changes the result. Independent lanes run side by side, and the sums
// vectorize. The lanes are combined in a fixed order, so the result depends
// on n alone, not on threads or ISA.
#pragma once

#include <cstdint>

#include "tensor/cpu/isa.h"
#include "tensor/functors.h"

namespace ts::cpu {

inline constexpr int kLanes = 8;

// The sum of term(j) for j in [0, n).
template <typename Term>
TS_INLINE_INTO_CLONE inline double lane_sum(int64_t n, const Term& term) {
  double lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) lanes[k] += term(j + k);
  }
  double sum = 0;
  for (; j < n; ++j) sum += term(j);
  for (double lane : lanes) sum += lane;
  return sum;
}

// The maximum of value(j) for j in [0, n), NaN if any is NaN; the lowest
// double for n = 0.
template <typename Value>
TS_INLINE_INTO_CLONE inline double lane_max(int64_t n, const Value& value) {
  double lanes[kLanes];
  for (double& lane : lanes) lane = functors::lowest<double>();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) lanes[k] = functors::Maximum{}(lanes[k], value(j + k));
  }
  double max = functors::lowest<double>();
  for (; j < n; ++j) max = functors::Maximum{}(max, value(j));
  for (double lane : lanes) max = functors::Maximum{}(max, lane);
  return max;
}

}  // namespace ts::cpu
