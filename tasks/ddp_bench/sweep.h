// The rows of a ddp_bench sweep, as PyTorch's benchmarks/distributed/ddp/benchmark.py
// lays them out: a warm-up on every rank alone (not reported), "no ddp" on
// rank 0, then DDP over the first 1, 2, 4, ... ranks of the machine and over
// whole machines after that, up to the whole world. A row's label is
// "<machines>M/<ranks per machine>G" as in PyTorch's table ("1M/4G": one
// machine, four of its GPUs; "2M/8G": two machines of eight; ours only:
// "1M/8G+4G", a launch ending in a part-filled machine).
#pragma once

#include <string>
#include <vector>

namespace ts::tasks::ddp_bench {

struct SweepRow {
  std::string label;              // "warmup", "no ddp", "1M/2G"
  int world_size = 1;             // ranks that train in this row: the first world_size
  bool ddp = false;               // wrapped in DDP over a communicator of those ranks
  bool every_rank_alone = false;  // the warm-up: each rank trains by itself
  bool reported = true;
};

// "<machines>M/<per machine>G" for the first `ranks` ranks when
// `ranks_per_machine` ranks share a machine.
std::string machine_label(int ranks, int ranks_per_machine);

// world_size >= 1, 1 <= ranks_per_machine <= world_size. With
// use_ddp_for_single_rank false, the one-rank row trains without DDP
// (as "no ddp" does).
std::vector<SweepRow> plan_sweep(int world_size, int ranks_per_machine, bool use_ddp_for_single_rank);

}  // namespace ts::tasks::ddp_bench
