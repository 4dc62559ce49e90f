// A report file a benchmark writes at the end of its run, checked at the
// start: a sweep of many minutes must not end on a path it cannot write.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "collectives/communicator.h"
#include "tensor/device.h"

namespace ts::tasks {

// Rank 0, which alone writes `path` (given by --`flag`; empty: no report),
// checks it can (base/files.h check_can_write) and tells the other ranks:
// all stop together on a path it cannot write, rank 0 saying why. Every
// rank calls it, whether or not it was given the flag (only rank 0's path
// counts).
absl::Status check_report_path(collectives::Communicator& world, const Device& device, const std::string& path,
                               absl::string_view flag);

}  // namespace ts::tasks
