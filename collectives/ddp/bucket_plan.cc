#include "collectives/ddp/bucket_plan.h"

#include <map>
#include <utility>

namespace ts::collectives::ddp {

std::vector<BucketSpec> plan_buckets(const std::vector<ParamInfo>& params, BucketCaps caps,
                                     absl::Span<const int> fill_order) {
  std::vector<int> order(fill_order.begin(), fill_order.end());
  if (order.empty()) {
    for (int i = static_cast<int>(params.size()) - 1; i >= 0; --i) order.push_back(i);
  }
  std::vector<BucketSpec> buckets;
  // One open bucket per (dtype, device); parameters of other kinds do not
  // close it. Each kind's first bucket has the small cap, as PyTorch's
  // compute_bucket_assignment_by_size keeps its cap list per kind: the
  // gradients of every dtype start travelling early.
  struct Open {
    BucketSpec bucket;
    bool first = true;
  };
  std::map<std::pair<DType, std::string>, Open> open;
  auto close = [&buckets](BucketSpec& bucket) {
    if (!bucket.params.empty()) buckets.push_back(std::move(bucket));
    bucket = BucketSpec{};
  };
  for (const int i : order) {
    const ParamInfo& p = params[i];
    Open& kind = open[{p.dtype, p.device.to_string()}];
    BucketSpec& bucket = kind.bucket;
    if (bucket.params.empty()) {
      bucket.dtype = p.dtype;
      bucket.device = p.device;
    }
    bucket.params.push_back(i);
    bucket.offsets.push_back(bucket.numel);
    bucket.numel += p.numel;
    if (bucket.numel * dtype_size(p.dtype) >= (kind.first ? caps.first_bytes : caps.bytes)) {
      close(bucket);
      kind.first = false;
    }
  }
  for (auto& [key, kind] : open) close(kind.bucket);
  return buckets;
}

}  // namespace ts::collectives::ddp
