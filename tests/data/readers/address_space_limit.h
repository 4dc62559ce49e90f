// Makes large allocations fail, as on a machine without the memory: Linux
// overcommits, so a decode's gigabyte buffer would otherwise be granted and
// only fault in the pages it touches. For tests of out-of-memory errors.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace ts::data::testing {

// While alive, this process may map at most `headroom` bytes more than it
// has mapped now (RLIMIT_AS); the old limit comes back after.
class AddressSpaceLimit {
 public:
  explicit AddressSpaceLimit(int64_t headroom) {
    getrlimit(RLIMIT_AS, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = static_cast<rlim_t>(mapped_bytes() + headroom);
    setrlimit(RLIMIT_AS, &lowered);
  }
  ~AddressSpaceLimit() { setrlimit(RLIMIT_AS, &saved_); }
  AddressSpaceLimit(const AddressSpaceLimit&) = delete;
  AddressSpaceLimit& operator=(const AddressSpaceLimit&) = delete;

  // AddressSanitizer reserves terabytes and aborts where malloc would fail:
  // tests using the limit skip themselves under it.
  static bool usable() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
    return false;
#else
    return true;
#endif
#else
    return true;
#endif
  }

 private:
  // The first field of /proc/self/statm: the mapped size in pages.
  static int64_t mapped_bytes() {
    std::ifstream statm("/proc/self/statm");
    int64_t pages = 0;
    statm >> pages;
    return pages * sysconf(_SC_PAGESIZE);
  }

  rlimit saved_;
};

}  // namespace ts::data::testing
