// Division by a divisor fixed when a kernel is set up, as a multiply-high,
// an add and a shift (Granlund and Montgomery, "Division by invariant
// integers using multiplication", 1994, theorem 4.2): a GPU has no integer
// divider, and a 64-bit division is a subroutine of about a hundred
// instructions, which the strided elementwise and pooling kernels would run
// several times per element. Exact for 0 <= n < 2^63 and 1 <= d < 2^63.
//
// With l = ceil(log2 d) and m = floor(2^64 (2^l - d) / d) + 1 (which fits in
// 64 bits), floor(n / d) = (n + mulhi(n, m)) >> l; n < 2^63 keeps the sum
// within 64 bits.
#pragma once

#include <cstdint>

#include "base/error.h"
#include "tensor/host_device.h"

namespace ts {

class IntDivider {
 public:
  IntDivider() = default;  // by 1
  explicit IntDivider(int64_t divisor) : divisor_(divisor) {
    TS_CHECK(divisor >= 1, "IntDivider: divisor ", divisor, " must be positive");
    while ((uint64_t{1} << shift_) < static_cast<uint64_t>(divisor)) ++shift_;
    const uint64_t excess = (uint64_t{1} << shift_) - static_cast<uint64_t>(divisor);  // 2^l - d < d
    magic_ = static_cast<uint64_t>((static_cast<unsigned __int128>(excess) << 64) / static_cast<uint64_t>(divisor)) + 1;
  }

  TS_HOST_DEVICE int64_t divisor() const { return divisor_; }
  // floor(n / divisor) for 0 <= n < 2^63.
  TS_HOST_DEVICE int64_t div(int64_t n) const {
    const uint64_t u = static_cast<uint64_t>(n);
    return static_cast<int64_t>((u + mulhi(u, magic_)) >> shift_);
  }

 private:
  TS_HOST_DEVICE static uint64_t mulhi(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __umul64hi(a, b);
#else
    return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
  }

  int64_t divisor_ = 1;
  uint64_t magic_ = 1;
  uint32_t shift_ = 0;
};

}  // namespace ts
