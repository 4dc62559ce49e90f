#include "collectives/ddp/bucket_plan.h"

#include <map>
#include <utility>

namespace ts::collectives::ddp {

std::vector<BucketSpec> plan_buckets(const std::vector<ParamInfo>& params, BucketCaps caps) {
  std::vector<BucketSpec> buckets;
  // One open bucket per (dtype, device); parameters of other kinds do not
  // close it.
  std::map<std::pair<DType, std::string>, BucketSpec> open;
  auto close = [&buckets](BucketSpec& bucket) {
    if (!bucket.params.empty()) buckets.push_back(std::move(bucket));
    bucket = BucketSpec{};
  };
  for (int i = static_cast<int>(params.size()) - 1; i >= 0; --i) {
    const ParamInfo& p = params[i];
    BucketSpec& bucket = open[{p.dtype, p.device.to_string()}];
    if (bucket.params.empty()) {
      bucket.dtype = p.dtype;
      bucket.device = p.device;
    }
    bucket.params.push_back(i);
    bucket.offsets.push_back(bucket.numel);
    bucket.numel += p.numel;
    const int64_t cap = buckets.empty() ? caps.first_bytes : caps.bytes;
    if (bucket.numel * dtype_size(p.dtype) >= cap) close(bucket);
  }
  for (auto& [kind, bucket] : open) close(bucket);
  return buckets;
}

}  // namespace ts::collectives::ddp
