// The vote that ends a comparison of every rank's settings with rank 0's
// (its config, its flags): all ranks learn which ones differ and stop
// together, so none goes on into collectives the others never call.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "collectives/communicator.h"
#include "tensor/device.h"

namespace ts::tasks {

// OK when no rank found `differences` between its `what` ("config",
// "flags") and rank 0's; else every rank fails (shared_by_all_ranks), one
// that differs naming its differences, the others the ranks that do. Every
// rank calls it.
absl::Status vote_on_differences(collectives::Communicator& comm, const Device& device, const std::string& differences,
                                 absl::string_view what);

}  // namespace ts::tasks
