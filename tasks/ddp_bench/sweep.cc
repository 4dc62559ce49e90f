#include "tasks/ddp_bench/sweep.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ts::tasks::ddp_bench {

std::string machine_label(int ranks, int ranks_per_machine) {
  if (ranks <= ranks_per_machine) return absl::StrCat("1M/", ranks, "G");
  const int whole = ranks / ranks_per_machine, rest = ranks % ranks_per_machine;
  // PyTorch's script labels whole machines only; a launch that ends in a
  // part-filled machine says what that machine adds.
  return absl::StrCat(whole, "M/", ranks_per_machine, "G", rest > 0 ? absl::StrCat("+", rest, "G") : "");
}

std::vector<SweepRow> plan_sweep(int world_size, int ranks_per_machine, bool use_ddp_for_single_rank) {
  std::vector<SweepRow> rows;
  rows.push_back({"warmup", 1, false, /*every_rank_alone=*/true, /*reported=*/false});
  rows.push_back({"no ddp", 1, false});
  // Powers of two inside the first machine, then whole machines, then the
  // world (when it ends in a partial machine).
  std::vector<int> sizes;
  for (int n = 1; n < ranks_per_machine; n *= 2) sizes.push_back(n);
  for (int n = ranks_per_machine; n <= world_size; n += ranks_per_machine) sizes.push_back(n);
  if (sizes.back() != world_size) sizes.push_back(world_size);
  for (const int n : sizes) rows.push_back({machine_label(n, ranks_per_machine), n, n > 1 || use_ddp_for_single_rank});
  return rows;
}

}  // namespace ts::tasks::ddp_bench
