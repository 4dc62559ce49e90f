// Every rank of a benchmark parses its own command line; ranks given other
// flags would time other work and pool it into one table (another batch
// size), or wait in collectives the others never call (another count of
// repeats). The training tasks compare their configs (config_diff.h); the
// benchmarks, whose settings are flags, compare these.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "collectives/communicator.h"
#include "tensor/device.h"

namespace ts::tasks {

// Fails on every rank unless every rank's flags (their current values, as
// absl parsed them, however spelled) equal rank 0's, but for those named
// in `per_rank` (a report path only rank 0 writes, the device): a rank that
// differs names the flags and both values, the others name the rank. Every
// rank calls it, after parsing its command line.
absl::Status check_ranks_share_flags(collectives::Communicator& comm, const Device& device,
                                     absl::Span<const absl::string_view> per_rank);

}  // namespace ts::tasks
