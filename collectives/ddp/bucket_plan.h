// Which gradients travel together: parameters grouped into buckets in the
// order backward finalizes them, split by dtype and device, each bucket
// closed once it reaches its byte cap. The first bucket of each dtype and
// device has a small cap so that communication starts early in backward.
// Before the first backward that order is a guess, the reverse of
// registration; the reducer plans again once it has seen the real one.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "tensor/tensor.h"

namespace ts::collectives::ddp {

struct BucketCaps {
  int64_t first_bytes = int64_t{1} << 20;
  int64_t bytes = int64_t{25} << 20;
};

struct ParamInfo {
  int64_t numel = 0;
  DType dtype = DType::kF32;
  Device device = Device::cpu();
};

struct BucketSpec {
  std::vector<int> params;       // indices into the parameter list, in fill order
  std::vector<int64_t> offsets;  // element offset of each in the flat buffer
  int64_t numel = 0;
  DType dtype = DType::kF32;
  Device device = Device::cpu();
};

// Buckets in launch order. Parameters fill them in `fill_order` (indices
// into `params`, each once; empty means reverse registration order). A
// bucket takes parameters until its size reaches its cap (so one large
// parameter makes a bucket of its own, as in PyTorch).
std::vector<BucketSpec> plan_buckets(const std::vector<ParamInfo>& params, BucketCaps caps,
                                     absl::Span<const int> fill_order = {});

}  // namespace ts::collectives::ddp
