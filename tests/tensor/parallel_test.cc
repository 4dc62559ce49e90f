// parallel_for's contract, which the CPU kernels rely on: [0, n) covered
// exactly once by chunks of at least `grain`, the caller running one of them,
// nested calls inline, and one thread meaning one chunk.
#include "tensor/cpu/parallel.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "tests/openmp_teams.h"

namespace ts::cpu {
namespace {

// Sets the OpenMP thread count for one test, as OMP_NUM_THREADS would.
class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~ThreadCount() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

using Range = std::pair<int64_t, int64_t>;

// The chunks one parallel_for call ran, and the thread of each.
struct Chunks {
  std::vector<Range> ranges;
  std::vector<std::thread::id> threads;
};

Chunks run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn = {}) {
  Chunks c;
  std::mutex mu;
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    if (fn) fn(begin, end);
    std::lock_guard<std::mutex> lock(mu);
    c.ranges.emplace_back(begin, end);
    c.threads.push_back(std::this_thread::get_id());
  });
  return c;
}

TEST(ParallelFor, CoversRangeOnceInChunksOfAtLeastGrain) {
  TS_SKIP_WIDE_OPENMP_TEAMS_UNDER_TSAN();
  ThreadCount threads(4);  // more chunks than this machine's cores, if need be
  for (const auto& [n, grain] : std::vector<Range>{
           {1, 1}, {3, 1}, {10, 3}, {1000, 1}, {1000, 7}, {1000, 300}, {1000, 600}, {1000, 2000}, {4097, 0}}) {
    SCOPED_TRACE(testing::Message() << "n=" << n << " grain=" << grain);
    std::vector<std::atomic<int>> hits(n);
    const Chunks c = run(n, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
    const int64_t expected_chunks = std::min<int64_t>(4, grain > 0 ? std::max<int64_t>(1, n / grain) : n);
    EXPECT_EQ(static_cast<int64_t>(c.ranges.size()), expected_chunks);
    if (c.ranges.size() > 1) {
      for (const auto& [begin, end] : c.ranges) EXPECT_GE(end - begin, grain);
    }
    // The caller does its share rather than only waiting.
    EXPECT_NE(std::find(c.threads.begin(), c.threads.end(), std::this_thread::get_id()), c.threads.end());
  }
}

TEST(ParallelFor, EmptyRangeCallsNothing) {
  bool called = false;
  parallel_for(0, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ParallelFor, NestedCallsRunInlineOnTheChunksThread) {
  TS_SKIP_WIDE_OPENMP_TEAMS_UNDER_TSAN();
  ThreadCount threads(4);
  std::vector<std::atomic<int>> hits(64 * 64);
  std::atomic<bool> inline_everywhere{true};
  parallel_for(64, 1, [&](int64_t begin, int64_t end) {
    const auto outer = std::this_thread::get_id();
    for (int64_t i = begin; i < end; ++i) {
      const Chunks inner = run(64, 1);
      if (inner.ranges != std::vector<Range>{{0, 64}} || inner.threads[0] != outer) {
        inline_everywhere = false;
      }
      for (int64_t j = 0; j < 64; ++j) hits[i * 64 + j]++;
    }
  });
  EXPECT_TRUE(inline_everywhere);
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ParallelFor, OneThreadRunsOneChunkOnTheCaller) {
  ThreadCount threads(1);
  EXPECT_EQ(num_threads(), 1);
  const Chunks c = run(1 << 20, 1);
  ASSERT_EQ(c.ranges, (std::vector<Range>{{0, 1 << 20}}));
  EXPECT_EQ(c.threads[0], std::this_thread::get_id());
}

TEST(ParallelFor, ExceptionInAChunkReachesTheCaller) {
  TS_SKIP_WIDE_OPENMP_TEAMS_UNDER_TSAN();
  ThreadCount threads(4);
  EXPECT_THROW(parallel_for(1000, 1,
                            [](int64_t begin, int64_t) {
                              if (begin > 0) throw std::runtime_error("chunk failed");
                            }),
               std::runtime_error);
}

}  // namespace
}  // namespace ts::cpu
