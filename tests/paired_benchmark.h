// A benchmark that times our code and a peer in alternation and reports
// their ratio (our time / the peer's): the figure `tools/microbench ratios`
// checks against a baseline, because machine noise and the VM's CPU of the
// day move it far less than either time. Used by the paired benchmarks of
// //tests/tensor:ops_benchmark and //tests/nn:conv_benchmark.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace ts::testing {

inline double median(std::vector<double> values) {
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  return values[mid];
}

// Times `ours` and `peer` once each per iteration, in an order that flips
// every iteration so that neither always finds the caches the other left;
// both see the same clock speed and the same neighbours. `seconds_of(fn)`
// runs fn once and returns its duration. The ratio is the median of the
// per-iteration ratios: one iteration disturbed by another process does not
// move it.
template <typename Clock, typename Ours, typename Peer>
void time_pair(benchmark::State& state, const Clock& seconds_of, Ours ours, Peer peer) {
  seconds_of(ours);  // warm-up: allocator cache, library heuristics, pages
  seconds_of(peer);
  std::vector<double> ratios;
  double peer_total_s = 0;
  bool ours_first = true;
  for (auto _ : state) {
    double ours_s, peer_s;
    if (ours_first) {
      ours_s = seconds_of(ours);
      peer_s = seconds_of(peer);
    } else {
      peer_s = seconds_of(peer);
      ours_s = seconds_of(ours);
    }
    ours_first = !ours_first;
    state.SetIterationTime(ours_s);
    ratios.push_back(ours_s / peer_s);
    peer_total_s += peer_s;
  }
  state.counters["peer_ms"] = benchmark::Counter(peer_total_s * 1e3, benchmark::Counter::kAvgIterations);
  state.counters["ratio"] = median(std::move(ratios));
}

// Wall time of one call on the host.
struct HostClock {
  template <typename Fn>
  double operator()(Fn fn) const {
    const auto start = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

}  // namespace ts::testing
