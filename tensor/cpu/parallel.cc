#include "tensor/cpu/parallel.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace ts::cpu {
namespace {

thread_local bool in_parallel_region = false;

// A fixed set of workers; each parallel_for posts one job (a chunked range)
// and the caller works on chunk 0 itself, then waits for the rest.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
  }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int chunks, const std::function<void(int)>& chunk_fn) {
    std::unique_lock<std::mutex> call_lock(call_mu_);  // one job at a time
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &chunk_fn;
      chunks_ = chunks;
      pending_ = chunks - 1;
      ++generation_;
    }
    wake_.notify_all();
    chunk_fn(0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void work(int index) {
    in_parallel_region = true;
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (index >= chunks_) continue;
        job = job_;
      }
      (*job)(index);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex call_mu_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int)>* job_ = nullptr;
  int chunks_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
};

int configured_threads() {
  if (const char* env = std::getenv("TS_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  // The cores this process may run on: under mpirun --bind-to core (or
  // taskset, or a container's cpuset) that is fewer than the machine has, and
  // a thread per machine core would oversubscribe the rank's own.
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) return std::max(1, CPU_COUNT(&mask));
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool& pool() {
  // Never destroyed: workers block forever in wait(), and joining them at exit
  // would hang; the OS reclaims them.
  static ThreadPool* p = new ThreadPool(configured_threads());
  return *p;
}

}  // namespace

int num_threads() { return pool().size(); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t max_chunks = grain > 0 ? std::max<int64_t>(1, n / grain) : n;
  const int chunks = static_cast<int>(std::min<int64_t>(num_threads(), max_chunks));
  if (chunks <= 1 || in_parallel_region) {
    fn(0, n);
    return;
  }
  const int64_t per_chunk = (n + chunks - 1) / chunks;
  pool().run(chunks, [&](int c) {
    const int64_t begin = c * per_chunk;
    const int64_t end = std::min(n, begin + per_chunk);
    const bool was_parallel = in_parallel_region;
    in_parallel_region = true;
    if (begin < end) fn(begin, end);
    in_parallel_region = was_parallel;
  });
}

}  // namespace ts::cpu
