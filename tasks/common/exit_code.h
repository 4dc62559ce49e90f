// The end every binary under tasks/ shares: a run that fails, by a Status or
// by an Error (or other exception) thrown from model code, ends with one line
// "<name>: <message>" on stderr and exit status 1; MPI is finalized either way
// (mpirun counts a rank that exits without MPI_Finalize as a crash). An error
// every rank shares is printed by rank 0 alone (said_by_rank_0).
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ts::tasks {

// Runs `body` and returns main's exit code: 0 or 1.
int run_to_exit_code(absl::string_view name, const std::function<absl::Status()>& body);

// `status`, marked (on every rank but rank 0, `leader` false) as an error
// that all ranks share and rank 0 prints: run_to_exit_code exits 1 for it
// without a line, so that N ranks do not print the same one N times.
absl::Status said_by_rank_0(bool leader, absl::Status status);

}  // namespace ts::tasks
