// The caching allocator's policy, run against a fake device so it is tested
// on machines without a GPU: reuse, splitting, merging, per-stream pools,
// record_stream deferral, out-of-memory recovery and statistics.
#include "tensor/cuda/caching_allocator.h"

#include <cstdlib>
#include <map>
#include <set>

#include "gtest/gtest.h"

namespace ts::cuda {
namespace {

// Device memory from the host heap, with a capacity, and events whose
// completion the test decides.
class FakeDevice final : public DeviceMemory {
 public:
  struct State {
    size_t capacity = size_t{1} << 32;
    size_t in_use = 0;
    int mallocs = 0;
    int frees = 0;
    int syncs = 0;
    std::map<void*, size_t> live;
    std::map<cudaEvent_t, bool> events;  // event -> done
    uintptr_t next_event = 1;
  };
  explicit FakeDevice(State* state) : s_(state) {}

  absl::StatusOr<void*> malloc(size_t bytes) override {
    if (s_->in_use + bytes > s_->capacity) return absl::ResourceExhaustedError("fake device out of memory");
    void* p = std::malloc(bytes);
    s_->live[p] = bytes;
    s_->in_use += bytes;
    s_->mallocs++;
    return p;
  }
  void free(void* ptr) override {
    s_->in_use -= s_->live.at(ptr);
    s_->live.erase(ptr);
    s_->frees++;
    std::free(ptr);
  }
  absl::StatusOr<cudaEvent_t> record_event(cudaStream_t) override {
    // Fake handles, numbered, never dereferenced.
    cudaEvent_t e = reinterpret_cast<cudaEvent_t>(s_->next_event++);  // NOLINT(performance-no-int-to-ptr)
    s_->events[e] = false;
    return e;
  }
  absl::StatusOr<bool> event_done(cudaEvent_t e) override { return s_->events.at(e); }
  void destroy_event(cudaEvent_t e) override { s_->events.erase(e); }
  void synchronize_device() override {
    s_->syncs++;
    for (auto& [e, done] : s_->events) done = true;
  }

 private:
  State* s_;
};

cudaStream_t stream(uintptr_t id) { return reinterpret_cast<cudaStream_t>(id); }  // NOLINT(performance-no-int-to-ptr)

class CachingAllocatorTest : public ::testing::Test {
 protected:
  FakeDevice::State device_;
  CachingAllocator allocator_{std::make_unique<FakeDevice>(&device_)};

  void* alloc(size_t bytes, cudaStream_t s = nullptr) {
    absl::StatusOr<void*> p = allocator_.allocate(bytes, s);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : nullptr;
  }
};

TEST_F(CachingAllocatorTest, FreedBlocksAreReusedWithoutNewSegments) {
  void* a = alloc(1000);
  allocator_.deallocate(a);
  void* b = alloc(900);  // same rounded size class, same stream
  EXPECT_EQ(a, b);
  EXPECT_EQ(device_.mallocs, 1);
  for (int i = 0; i < 100; ++i) allocator_.deallocate(alloc(4000));
  EXPECT_EQ(device_.mallocs, 1);
  EXPECT_EQ(allocator_.stats().num_device_mallocs, 1);
  allocator_.deallocate(b);
}

TEST_F(CachingAllocatorTest, SmallRequestsShareOneSegment) {
  std::set<void*> ptrs;
  for (int i = 0; i < 8; ++i) ptrs.insert(alloc(100 * 1024));
  EXPECT_EQ(ptrs.size(), 8u);
  EXPECT_EQ(device_.mallocs, 1);  // 8 x 100 KiB fit in one 2 MiB segment
  EXPECT_EQ(allocator_.stats().reserved_bytes, static_cast<int64_t>(CachingAllocator::kSmallSegment));
  for (void* p : ptrs) allocator_.deallocate(p);
}

TEST_F(CachingAllocatorTest, SizesRoundTo512AndStatsTrackThem) {
  void* a = alloc(1);
  AllocatorStats s = allocator_.stats();
  EXPECT_EQ(s.allocated_bytes, 512);
  EXPECT_EQ(s.num_allocations, 1);
  void* b = alloc(513);
  EXPECT_EQ(allocator_.stats().allocated_bytes, 512 + 1024);
  allocator_.deallocate(a);
  allocator_.deallocate(b);
  s = allocator_.stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.peak_allocated_bytes, 512 + 1024);
  allocator_.reset_peak_stats();
  EXPECT_EQ(allocator_.stats().peak_allocated_bytes, 0);
  EXPECT_EQ(allocator_.allocate(0, nullptr).value(), nullptr);
}

TEST_F(CachingAllocatorTest, NeighboursMergeSoALargerRequestFits) {
  // Fill one small segment with four 512 KiB blocks, free them all: they merge
  // back into one 2 MiB block that serves a 1 MiB request.
  void* p[4];
  for (auto& q : p) q = alloc(512 * 1024);
  EXPECT_EQ(device_.mallocs, 1);
  for (auto& q : p) allocator_.deallocate(q);
  void* big = alloc(1024 * 1024);
  EXPECT_EQ(big, p[0]);
  EXPECT_EQ(device_.mallocs, 1);
  allocator_.deallocate(big);
}

TEST_F(CachingAllocatorTest, LargeRequestsSplitLargeSegments) {
  void* a = alloc(3 << 20);  // from a 20 MiB segment
  void* b = alloc(3 << 20);  // the rest of it
  EXPECT_EQ(device_.mallocs, 1);
  EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), 3 << 20);
  void* huge = alloc(30 << 20);  // its own segment, rounded to 2 MiB
  EXPECT_EQ(device_.mallocs, 2);
  EXPECT_EQ(allocator_.stats().reserved_bytes, (20 << 20) + (30 << 20));
  for (void* q : {a, b, huge}) allocator_.deallocate(q);
}

TEST_F(CachingAllocatorTest, PoolsArePerStream) {
  void* a = alloc(4096, stream(1));
  allocator_.deallocate(a);
  void* b = alloc(4096, stream(2));
  EXPECT_NE(a, b);  // a's block stays with stream 1
  EXPECT_EQ(device_.mallocs, 2);
  void* c = alloc(4096, stream(1));
  EXPECT_EQ(a, c);
  allocator_.deallocate(b);
  allocator_.deallocate(c);
}

TEST_F(CachingAllocatorTest, RecordStreamDefersReuseUntilTheStreamIsDone) {
  void* a = alloc(4096, stream(1));
  allocator_.record_stream(a, stream(2));
  allocator_.deallocate(a);
  ASSERT_EQ(device_.events.size(), 1u);
  void* b = alloc(4096, stream(1));
  EXPECT_NE(a, b);  // stream 2 may still be reading a
  for (auto& [e, done] : device_.events) done = true;
  allocator_.deallocate(b);
  void* c = alloc(4096, stream(1));
  EXPECT_TRUE(c == a || c == b);
  EXPECT_TRUE(device_.events.empty());  // processed and destroyed
  allocator_.deallocate(c);
}

TEST_F(CachingAllocatorTest, OutOfMemoryReleasesCachedSegmentsAndRetries) {
  device_.capacity = 40 << 20;
  void* a = alloc(12 << 20);
  void* b = alloc(12 << 20);
  allocator_.deallocate(a);  // cached, not returned
  allocator_.deallocate(b);
  EXPECT_EQ(device_.in_use, size_t{24} << 20);
  void* c = alloc(30 << 20);  // fits only once the cache is released
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(device_.frees, 2);
  EXPECT_GE(device_.syncs, 1);
  absl::StatusOr<void*> d = allocator_.allocate(30 << 20, nullptr);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(d.status().message()).find("cannot allocate 31457280 bytes"), std::string::npos) << d.status();
  EXPECT_NE(std::string(d.status().message()).find("reserved"), std::string::npos);
  allocator_.deallocate(c);
}

TEST_F(CachingAllocatorTest, EmptyCacheReturnsOnlyUnusedSegments) {
  void* a = alloc(1000);
  void* b = alloc(12 << 20);
  allocator_.deallocate(b);
  allocator_.empty_cache();
  EXPECT_EQ(device_.frees, 1);
  EXPECT_EQ(allocator_.stats().reserved_bytes, static_cast<int64_t>(CachingAllocator::kSmallSegment));
  allocator_.deallocate(a);
  allocator_.empty_cache();
  EXPECT_EQ(allocator_.stats().reserved_bytes, 0);
  EXPECT_EQ(allocator_.stats().num_device_frees, 2);
  EXPECT_TRUE(device_.live.empty());
}

}  // namespace
}  // namespace ts::cuda
